package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

var svgBlock = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// TestHTMLSelfContained checks every fixture's page: nothing to fetch, no
// script, every figure well-formed SVG, and the parts the page promises.
func TestHTMLSelfContained(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			r := fx.result()
			page := string(render(t, r, HTML))
			for _, bad := range []string{"<script", "<link", "src=", "href=", "url(", "@import"} {
				if strings.Contains(page, bad) {
					t.Errorf("page contains %q: it must need nothing from outside", bad)
				}
			}
			if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "Content-Security-Policy") || !strings.HasSuffix(page, "</html>\n") {
				t.Error("page lacks its doctype, its CSP or its end")
			}
			svgs := svgBlock.FindAllString(page, -1)
			ran := 0
			for _, tr := range r.Targets {
				if len(tr.Trials) > 0 {
					ran++
				}
			}
			figures := ran // a timeline per target that ran...
			if slices.ContainsFunc(r.Targets, func(tr results.TargetResult) bool { return len(tr.Trials) > 1 }) {
				figures *= 2 // ...and a histogram each when there is a distribution
			}
			if len(svgs) != figures {
				t.Errorf("%d figures, want %d", len(svgs), figures)
			}
			for i, svg := range svgs {
				dec := xml.NewDecoder(strings.NewReader(svg))
				dec.Strict = true
				for {
					_, err := dec.Token()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatalf("figure %d is not well-formed: %v\n%s", i, err, svg)
						}
						break
					}
				}
			}
			for _, want := range []string{"<table>", "<h2>" + r.Scenario + "</h2>", scaleOf(r)} {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
}

func scaleOf(r *results.Result) string { return esc(summarize(r, Options{}).scale) }

// TestHTMLEscapes checks that text from targets cannot become markup.
func TestHTMLEscapes(t *testing.T) {
	r := raceNotShown()
	r.Targets[0].Guarantee = `<script>alert("x")</script>`
	r.Targets[1].Target = `actor"><img src=x>`
	page := string(render(t, r, HTML))
	if strings.Contains(page, "<script>") || strings.Contains(page, "<img") {
		t.Errorf("target text became markup:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the escaped guarantee is missing")
	}
}

// TestHTMLTimelineCap checks that a huge burst draws a bounded timeline
// and says so.
func TestHTMLTimelineCap(t *testing.T) {
	r := tenHitsOneView()
	r.Targets = r.Targets[:1]
	r.Targets[0].Trials[0] = trial(0, "slug-big", 500, 0, 0, 1, time.Millisecond)
	page := string(render(t, r, HTML))
	if got := strings.Count(page, "<rect "); got != maxLanes {
		t.Errorf("%d lanes drawn, want %d", got, maxLanes)
	}
	if !strings.Contains(page, "the first 40 of 500 requests to finish are drawn") {
		t.Error("the page does not say that lanes were left out")
	}
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ raw, want time.Duration }{
		{1, 1}, {3, 5}, {663 * time.Microsecond, time.Millisecond}, {150 * time.Microsecond, 200 * time.Microsecond},
		{2 * time.Millisecond, 2 * time.Millisecond}, {7 * time.Second, 10 * time.Second},
	} {
		if got := niceStep(tc.raw); got != tc.want {
			t.Errorf("niceStep(%v) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

func TestBars(t *testing.T) {
	var ts []results.Trial
	for _, c := range []int64{1, 1, 2, 4} {
		ts = append(ts, results.Trial{Counted: c})
	}
	got := bars(results.TallyOf(ts).Counted)
	want := []bar{{1, 1, 2}, {2, 2, 1}, {3, 3, 0}, {4, 4, 1}}
	if len(got) != len(want) {
		t.Fatalf("bars = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bar %d = %v, want %v", i, got[i], want[i])
		}
	}
	ts = nil
	for c := range int64(100) {
		ts = append(ts, results.Trial{Counted: c})
	}
	// Counts a broken service made up at both ends of int64 must not
	// overflow the span into a loop without end (found by FuzzReadJSON).
	if got := bars(map[int64]int{math.MinInt64: 1, math.MaxInt64: 2}); len(got) > maxBars || got[0].lo != math.MinInt64 || got[len(got)-1].hi != math.MaxInt64 {
		t.Errorf("extreme counts gave %d bars from %d to %d", len(got), got[0].lo, got[len(got)-1].hi)
	}
	if got := bars(results.TallyOf(ts).Counted); len(got) > maxBars || got[0].lo != 0 || got[len(got)-1].hi != 99 {
		t.Errorf("100 values gave %d bars from %d to %d; want at most %d covering 0-99", len(got), got[0].lo, got[len(got)-1].hi, maxBars)
	}
}

// TestHTMLInChromium loads pages in headless Chromium, as a person would
// open the file: the DOM must hold the table and the figures, the console
// must stay silent (the page's CSP turns any fetch into a console error),
// and the screenshot must show something. The PNGs are kept under
// $RACELAB_SCREENSHOTS when it is set, to be looked at.
//
// Chromium is the Debian package `chromium`; without it the test skips.
func TestHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install -y --no-install-recommends chromium): page not checked in a browser")
	}
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	dir := t.TempDir()
	shots := os.Getenv("RACELAB_SCREENSHOTS")
	for _, fx := range []string{"five-checkouts-errors", "evidence"} {
		t.Run(fx, func(t *testing.T) {
			var r *results.Result
			for _, f := range fixtures {
				if f.name == fx {
					r = f.result()
				}
			}
			page := filepath.Join(dir, fx+".html")
			if err := os.WriteFile(page, render(t, r, HTML), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, console := chromium(t, bin, "--dump-dom", "file://"+page)
			for _, want := range []string{"<table>", "VERDICT", "<svg", "One trial, request by request", "#1"} {
				if !strings.Contains(dom, want) {
					t.Errorf("the loaded page lacks %q", want)
				}
			}
			if console != "" {
				t.Errorf("the console spoke while loading the page:\n%s", console)
			}
			shot := filepath.Join(dir, fx+".png")
			if shots != "" {
				shot = filepath.Join(shots, fx+".png")
			}
			chromium(t, bin, "--screenshot="+shot, "--window-size=1400,1000", "file://"+page)
			checkScreenshot(t, shot, 1400, 1000)
		})
	}
}

// chromium runs headless Chromium on its own profile and returns its
// standard output and the page's console messages.
func chromium(t *testing.T, bin string, args ...string) (stdout, console string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	var msgs []string
	for l := range strings.Lines(errOut.String()) {
		if strings.Contains(l, ":CONSOLE") {
			msgs = append(msgs, l)
		}
	}
	return out.String(), strings.Join(msgs, "")
}

// checkScreenshot checks that a PNG has the window's size and is not a
// blank page: a fair share of its pixels are not white.
func checkScreenshot(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
		}
	}
	if total := (b.Dx() / 4) * (b.Dy() / 4); inked < total/50 {
		t.Errorf("screenshot is nearly blank: %d of %d sampled pixels inked", inked, total)
	}
}
