package validate

import "github.com/arenabot/arenabot/frameworks"

// MetaFile is the Profile of the outcomes about an entry's meta.json (MetaWarnings).
const MetaFile = "meta.json"

// MetaDoc is where meta.json's fields are written down, in this repository.
const MetaDoc = "docs/meta-json.md"

// MetaWarnings are the warnings about an entry's meta.json (frameworks.Entry.Warnings: an
// unknown completeness axis, a mode on an engine), as advisory WARN outcomes: shown where
// validation's are (validate's lines, a reply's advisories), refusing nothing.
func MetaWarnings(e frameworks.Entry) []Outcome {
	var out []Outcome
	for _, w := range e.Warnings {
		out = append(out, Outcome{
			Profile:  MetaFile,
			Check:    w.Field,
			Status:   Warn,
			Tier:     Advisory,
			Expected: w.Fix,
			Got:      w.Msg,
			Contract: "meta.json — the field " + w.Field + " (" + MetaDoc + "#" + w.Field + ")",
		})
	}
	return out
}
