package compose

import (
	"fmt"
	"strconv"
	"time"
)

// Host is what a host refuses that a compose file may ask for.
type Host struct {
	// Ulimits maps a resource name ("memlock", "nofile") to the host's hard limit, -1 for
	// unlimited; a resource it does not name is left as the file has it.
	Ulimits map[string]int64
	// NoStartInterval says the Docker Engine has no healthcheck start_interval (API before
	// 1.44, Docker before 25); Debian's docker-compose 1.29 rejects the key too.
	NoStartInterval bool
}

// Relax lowers what the host cannot grant, instead of letting a container fail to start,
// and returns one line per change, for the log and the reply:
//
//	service server: ulimit memlock -1 lowered to 8388608: the host's hard limit
//
// A soft or hard ulimit above the host's hard limit (unlimited, -1, is above any finite
// limit) is lowered to it. A healthcheck's start_interval is dropped when the engine has
// none: the check then runs every interval from the start.
func (s *Stack) Relax(h Host) []string {
	var notes []string
	for i := range s.Services {
		sv := &s.Services[i]
		for j := range sv.Ulimits {
			u := &sv.Ulimits[j]
			limit, ok := h.Ulimits[u.Name]
			if !ok || limit == unlimited || (!above(u.Hard, limit) && !above(u.Soft, limit)) {
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
		if hc := sv.Healthcheck; h.NoStartInterval && hc != nil && hc.StartInterval != 0 {
			notes = append(notes, fmt.Sprintf("service %s: healthcheck start_interval %s dropped: the Docker Engine has none; the check runs every %s",
				sv.Name, hc.StartInterval, interval(hc.Interval)))
			hc.StartInterval = 0
		}
	}
	return notes
}

// interval is a healthcheck interval as Docker applies it: 0 is its default, 30 s.
func interval(d time.Duration) string {
	if d == 0 {
		return "30s (Docker's default)"
	}
	return d.String()
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
