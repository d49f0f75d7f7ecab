package measure

// BenchEntry is benchEntry for BenchmarkOverhead, which plans as the runner's commands do
// (runner.NewPlan) and so sits in the external test package.
var BenchEntry = benchEntry
