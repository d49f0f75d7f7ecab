package bot

import (
	"testing"

	"github.com/arenabot/arenabot/bot/command"
)

// TestEveryCommandHandled keeps the bot's handlers and the grammar's table the same set:
// a command added to command.Specs without a handler (or a handler left for a command
// that was removed) fails here, not on a user's comment.
func TestEveryCommandHandled(t *testing.T) {
	specs := map[command.Kind]bool{}
	for _, s := range command.Specs {
		specs[s.Kind] = true
		if handlers[s.Kind] == nil {
			t.Errorf("%s is in command.Specs but has no handler", s.Kind.Word())
		}
	}
	for k := range handlers {
		if !specs[k] {
			t.Errorf("%s has a handler but is not in command.Specs", k.Word())
		}
	}
}
