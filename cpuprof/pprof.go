package cpuprof

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/pprof/profile"
)

// ToPprof converts samples to a pprof profile with two sample types, samples/count and
// cpu/nanoseconds (the perf period), labelled with the sample's comm and pid. Frames
// become locations at perf's printed address (for user frames the offset in the DSO),
// one function per display name ([Frame.Name]) and one mapping per DSO, the main
// executable's first. duration is how long the recording ran.
func ToPprof(samples []Sample, duration time.Duration) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"},
		},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		DurationNanos: duration.Nanoseconds(),
	}
	type locKey struct {
		dso, name string
		addr      uint64
	}
	mappings := map[string]*profile.Mapping{}
	funcs := map[string]*profile.Function{}
	locs := map[locKey]*profile.Location{}
	var total uint64
	for _, s := range samples {
		total += s.Period
		ps := &profile.Sample{
			Value:    []int64{1, int64(s.Period)},
			Label:    map[string][]string{"comm": {s.Comm}},
			NumLabel: map[string][]int64{"pid": {int64(s.PID)}},
		}
		for _, f := range s.Stack {
			name := f.Name()
			k := locKey{f.DSO, name, f.Addr}
			loc := locs[k]
			if loc == nil {
				fn := funcs[name]
				if fn == nil {
					fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
					funcs[name] = fn
					p.Function = append(p.Function, fn)
				}
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Address: f.Addr,
					Line: []profile.Line{{Function: fn}}}
				if f.DSO != "" {
					m := mappings[f.DSO]
					if m == nil {
						m = &profile.Mapping{ID: uint64(len(p.Mapping) + 1), File: f.DSO, HasFunctions: true}
						mappings[f.DSO] = m
						p.Mapping = append(p.Mapping, m)
					}
					loc.Mapping = m
				}
				locs[k] = loc
				p.Location = append(p.Location, loc)
			}
			ps.Location = append(ps.Location, loc)
		}
		p.Sample = append(p.Sample, ps)
	}
	if len(samples) > 0 {
		p.Period = int64(total / uint64(len(samples)))
	}
	// pprof takes the first mapping for the main binary ("File:" in its reports).
	if i := slices.IndexFunc(p.Mapping, func(m *profile.Mapping) bool { return IsOwnCode(Frame{DSO: m.File}, false) }); i > 0 {
		m := p.Mapping[i]
		copy(p.Mapping[1:i+1], p.Mapping[:i])
		p.Mapping[0] = m
	}
	return p
}

// WritePprof checks p and writes it gzipped, the .pb.gz form pprof reads.
func WritePprof(w io.Writer, p *profile.Profile) error {
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return p.Write(w)
}

// FromPprof turns a profile ToPprof wrote (a saved .cpu.pb.gz, such as a base's committed
// one) back into samples that Summarize reads as it read the originals: each location's
// function name as the frame's symbol, its mapping's file as the DSO, the cpu value as the
// period. Frames ToPprof named "[unknown] (<dso>)" keep that name.
func FromPprof(p *profile.Profile) ([]Sample, error) {
	cpu := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if cpu < 0 {
		return nil, fmt.Errorf("pprof profile: no cpu sample type")
	}
	out := make([]Sample, 0, len(p.Sample))
	for _, ps := range p.Sample {
		if cpu >= len(ps.Value) || ps.Value[cpu] < 0 {
			return nil, fmt.Errorf("pprof profile: a sample without its cpu value")
		}
		s := Sample{Period: uint64(ps.Value[cpu])}
		if c := ps.Label["comm"]; len(c) > 0 {
			s.Comm = c[0]
		}
		if pid := ps.NumLabel["pid"]; len(pid) > 0 {
			s.PID, s.TID = int(pid[0]), int(pid[0])
		}
		for _, loc := range ps.Location {
			f := Frame{Addr: loc.Address, Symbol: Unknown}
			if len(loc.Line) > 0 && loc.Line[0].Function != nil {
				f.Symbol = loc.Line[0].Function.Name
			}
			if loc.Mapping != nil {
				f.DSO = loc.Mapping.File
			}
			s.Stack = append(s.Stack, f)
		}
		out = append(out, s)
	}
	return out, nil
}
