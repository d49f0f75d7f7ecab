package bot

import (
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/md"
)

// replyBody is a reply to login: the mention on its own line, so that a body starting
// with a heading still renders as one.
func replyBody(login, body string) string { return report.Reply(login, body) }

// problemText renders an error reply: the command as written, the problem and the fix.
func problemText(line, problem, fix string) string { return report.RenderProblem(line, problem, fix) }

// codeSpan renders untrusted s as inline code.
func codeSpan(s string) string { return md.Code(s) }
