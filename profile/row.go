package profile

// A Row is the key of one measurement from the plan to the reply: an entry, a test (a
// profile's name) and a connection count. The selection lists them, the queued job carries
// them (these JSON names), the status comment and the runner's progress name them.
type Row struct {
	Entry string `json:"entry"` // "gin"
	Test  string `json:"test"`  // "baseline"
	Conns int    `json:"conns"` // 512
}
