package compose

import (
	"fmt"
	"strconv"
)

// Relax lowers the ulimits the host cannot grant: hard maps a resource name ("memlock",
// "nofile") to the host's hard limit, -1 for unlimited; a resource it does not name is left
// as the file has it. A soft or hard limit above the host's (unlimited, -1, counts as
// above any finite limit) is lowered to it. Relax returns one line per change, for the
// log and the reply, instead of letting the container fail to start:
//
//	service server: ulimit memlock -1 lowered to 8388608: the host's hard limit
func (s *Stack) Relax(hard map[string]int64) []string {
	var notes []string
	for i := range s.Services {
		sv := &s.Services[i]
		for j := range sv.Ulimits {
			u := &sv.Ulimits[j]
			limit, ok := hard[u.Name]
			if !ok || limit == unlimited {
				continue
			}
			if !above(u.Hard, limit) && !above(u.Soft, limit) {
				continue
			}
			was := limitString(u.Soft, u.Hard)
			if above(u.Soft, limit) {
				u.Soft = limit
			}
			if above(u.Hard, limit) {
				u.Hard = limit
			}
			notes = append(notes, fmt.Sprintf("service %s: ulimit %s %s lowered to %s: the host's hard limit",
				sv.Name, u.Name, was, limitString(u.Soft, u.Hard)))
		}
	}
	return notes
}

// above reports whether the limit v exceeds the finite limit max.
func above(v, max int64) bool { return v == unlimited || v > max }

// limitString writes a soft/hard pair as compose does: one number when they are equal.
func limitString(soft, hard int64) string {
	if soft == hard {
		return strconv.FormatInt(soft, 10)
	}
	return strconv.FormatInt(soft, 10) + ":" + strconv.FormatInt(hard, 10)
}
