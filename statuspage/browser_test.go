package statuspage

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/arenabot/arenabot/queue"
)

// needChromium returns the path of a chromium binary, skipping the test without one, or
// failing it under CI (where .ci/setup installs Debian's chromium).
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if ci := os.Getenv("CI"); ci != "" {
		t.Fatalf("chromium is not on PATH (CI=%s): install it (Debian: apt-get install chromium; .ci/setup does)", ci)
	}
	t.Skip("chromium is not on PATH: install it (Debian: apt-get install chromium) to run the browser test")
	return ""
}

// screenshotDir is where the test saves its screenshots: $ARENA_SCREENSHOT_DIR when set,
// else a temporary directory.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ARENA_SCREENSHOT_DIR")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor evaluates a JavaScript condition every 100ms until it holds, failing after
// within. (chromedp.Poll builds its predicate with new Function, which the page's CSP
// forbids.)
func waitFor(t *testing.T, ctx context.Context, cond string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, still not %s (last error %v)", within, cond, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBrowser renders the seeded page in headless chromium: the counts shown match the
// queue, hostile strings are text (no element of theirs exists, no alert ran), the page
// picks up a new job without navigating, at 375 px wide it does not scroll sideways, and
// with scripts off it shows every job all the same.
// newBrowser starts chromium for the test: its context, a step that must succeed, and a
// full-page screenshot saved under screenshotDir.
func newBrowser(t *testing.T, chromium string) (context.Context, func(string, chromedp.Action[chromedp.Void]), func(string)) {
	t.Helper()
	shots := screenshotDir(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancel)
	// The first Run starts the browser; it lives as long as ctx, so the timeout is per step.
	must := func(name string, a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(ctx, a); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	save := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(shots, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	return ctx, must, save
}

func TestBrowser(t *testing.T) {
	chromium := needChromium(t)
	start := time.Now()
	q, clk := seed(t)
	srv := httptest.NewServer(Handler(Config{Queue: q, Now: clk.Now, Refresh: 300 * time.Millisecond}))
	defer srv.Close()
	ctx, must, save := newBrowser(t, chromium)

	// Any alert, confirm or prompt an injected script called would be counted.
	must("trap dialogs", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__dialogs = 0; window.alert = window.confirm = window.prompt = function () { window.__dialogs++; };`,
		})
		return err
	}))
	must("emulate desktop", chromedp.EmulateViewport(1280, 900))
	must("load", chromedp.Steps(chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#finished")))
	t.Logf("browser started and page loaded in %v", time.Since(start).Round(time.Millisecond))

	// The counts shown are the queue's.
	lines, err := q.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	running, waiting := 0, 0
	for _, l := range lines {
		for _, p := range l.Places {
			if p.Job.State == queue.Running {
				running++
			} else {
				waiting++
			}
		}
	}
	awaiting, err := q.List(t.Context(), queue.Filter{States: []queue.State{queue.AwaitingApproval}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sel  string
		want int
	}{
		{"#n-running", running}, {"#n-waiting", waiting}, {"#n-awaiting", len(awaiting)},
		{"#pools .job[data-state=running]", running}, {"#pools .job[data-state=queued]", waiting},
		{"#awaiting .job", len(awaiting)}, {"#runners .runner", 2}, {"#finished .job", 4},
		{"#hosts .host", 2}, {"#hosts .host.s-running", 1},
	} {
		var got int
		if strings.HasPrefix(c.sel, "#n-") {
			got = eval[int](t, ctx, fmt.Sprintf(`Number(document.querySelector(%q).textContent)`, c.sel))
		} else {
			got = eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, c.sel))
		}
		if got != c.want {
			t.Errorf("%s shows %d, the queue holds %d", c.sel, got, c.want)
		}
	}
	if st := eval[string](t, ctx, `document.querySelector('#runners .runner[data-pool=gpu]').dataset.state`); st != "no live runner" {
		t.Errorf("the gpu runner (last seen an hour ago) is %q, want no live runner", st)
	}
	if st := eval[string](t, ctx, `document.querySelector('#runners .runner[data-pool=default]').dataset.state`); st != "live" {
		t.Errorf("the default runner (beat just now) is %q, want live", st)
	}

	// The hostile strings are text: shown as typed, and no element of theirs exists.
	if got := eval[string](t, ctx, `document.querySelector('.job[data-id=d2] .command').textContent`); got != hostileCommand {
		t.Errorf("the command shows as %q, want %q", got, hostileCommand)
	}
	if got := eval[string](t, ctx, `document.querySelector('.job[data-id=d2] .plan').textContent`); !strings.Contains(got, hostileFramework) {
		t.Errorf("the plan shows as %q, want it to hold %q", got, hostileFramework)
	}
	if got := eval[string](t, ctx, `document.querySelector('.job[data-id=a1] .requester').textContent`); got != hostileLogin {
		t.Errorf("the requester shows as %q, want %q", got, hostileLogin)
	}
	if got := eval[string](t, ctx, `document.querySelector('#hosts .host.s-idle .host-name').textContent`); got != hostileHost {
		t.Errorf("the idle host's name shows as %q, want %q", got, hostileHost)
	}
	injected := `document.querySelectorAll('img, svg, iframe, object, embed, #live script').length + ' ' + document.scripts.length + ' ' + window.__dialogs`
	if got := eval[string](t, ctx, injected); got != "0 1 0" {
		t.Errorf("injected elements, scripts, dialogs = %s, want 0 1 0 (only the page's own script)", got)
	}
	save("desktop.png")

	// The page picks up a job enqueued after it loaded, without navigating.
	must("mark the document", chromedp.Evaluate[chromedp.Void](`window.__loaded = 'first'`))
	if _, _, err := q.Enqueue(t.Context(), queue.Job{ID: "fresh", Pool: "arm", Repo: "octo/arena", PR: 99, Requester: "ivy",
		Command: "/benchmark -f gin", Frameworks: []string{"gin"}, Kind: queue.Benchmark}); err != nil {
		t.Fatal(err)
	}
	refresh := time.Now()
	waitFor(t, ctx, `document.querySelector('.job[data-id=fresh]') !== null`, 10*time.Second)
	t.Logf("the new job appeared after %v", time.Since(refresh).Round(time.Millisecond))
	if got := eval[string](t, ctx, `window.__loaded + ' ' + document.querySelector('#n-waiting').textContent`); got != fmt.Sprintf("first %d", waiting+1) {
		t.Errorf("after the refresh: document mark and waiting count = %q, want \"first %d\" (the same document, one more waiting)", got, waiting+1)
	}
	if got := eval[string](t, ctx, injected); got != "0 1 0" {
		t.Errorf("after the refresh: injected elements, scripts, dialogs = %s, want 0 1 0", got)
	}

	// At 375 px wide (a phone, the viewport meta honoured) nothing scrolls sideways.
	must("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	must("reload", chromedp.Steps(chromedp.Reload(), chromedp.WaitVisible("#finished")))
	if got := eval[string](t, ctx, `document.documentElement.scrollWidth + ' ' + window.innerWidth`); !fits(got) {
		t.Errorf("at 375 px: scrollWidth innerWidth = %s, want innerWidth 375 and scrollWidth no more (a wider innerWidth is the phone zooming out to fit a page that overflows)", got)
	}
	save("phone-375.png")

	// With scripts off (another tab) the page shows every job all the same: the server
	// renders it, and only the refresh needs the script.
	nctx, ncancel := chromedp.NewContext(ctx)
	defer ncancel()
	if _, err := chromedp.Run(nctx, chromedp.Steps(
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.EmulateViewport(375, 812, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#finished"),
	)); err != nil {
		t.Fatalf("load with scripts off: %v", err)
	}
	nodes, err := chromedp.Run(nctx, chromedp.Nodes(chromedp.CSSAll("#live .job")))
	if want := running + waiting + 1 + len(awaiting) + 4; err != nil || len(nodes) != want {
		t.Errorf("with scripts off: %d jobs shown (%v), want %d", len(nodes), err, want)
	}
	png, err := chromedp.Run(nctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "noscript-375.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("browser test took %v", time.Since(start).Round(time.Millisecond))
}

// fits reports whether "scrollWidth innerWidth" says the page is no wider than a 375 px
// viewport.
func fits(s string) bool {
	var scroll, inner int
	if _, err := fmt.Sscan(s, &scroll, &inner); err != nil {
		return false
	}
	return inner == 375 && scroll <= inner
}

// TestBrowserFleet: the page of a fleet at work (seedFleet) as a browser shows it: both
// routed pools with their hosts, every running job of pool default, and the sweep split over
// two hosts with its shares; saved as fleet.png.
func TestBrowserFleet(t *testing.T) {
	chromium := needChromium(t)
	q, sweep, _ := seedFleet(t)
	srv := httptest.NewServer(Handler(Config{Queue: q, Pools: []string{queue.DefaultPool, "big"}}))
	defer srv.Close()
	ctx, must, save := newBrowser(t, chromium)
	must("emulate desktop", chromedp.EmulateViewport(1280, 900))
	must("load", chromedp.Steps(chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#splits")))
	if n := eval[int](t, ctx, `document.querySelectorAll("#hosts .host").length`); n != 3 {
		t.Errorf("%d hosts shown, want bench-a, bench-b and big-1", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#splits .share").length`); n != 2 {
		t.Errorf("%d shares shown, want 2", n)
	}
	if got := eval[string](t, ctx, `document.querySelector("#splits h3").dataset.job`); got != sweep.ID {
		t.Errorf("the split shown is %q, want the sweep %s", got, sweep.ID)
	}
	if got := eval[string](t, ctx, `document.querySelector("#splits progress").value + ""`); got != "50" {
		t.Errorf("the sweep's progress bar is at %s, want 50", got)
	}
	save("fleet.png")
}
