package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Write renders the markdown report at path and the chart beside it.
func Write(path string, r *Results) error {
	png := strings.TrimSuffix(path, filepath.Ext(path)) + ".png"
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Performance\n\n")
	w("Measured by `make bench` (`bench/`, see [bench/README.md](../bench/README.md)) on %s; the run took %s.\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))
	if r.Flags != "" {
		w("Options of the run: `%s`.\n", r.Flags)
	}
	w("Every number below comes from that one run on one machine, side by side; ratios compare numbers of the same run.\n")
	mergedRuns(w, r)
	w("Regenerate with `make bench`; re-render from the saved results with `(cd bench && go build -o ../_output/bin/ ./cmd/virt-bench) && _output/bin/virt-bench --from-json docs/performance.json`.\n\n")
	w("![charts](%s)\n\n", filepath.Base(png))
	writeMachine(w, r)
	verdicts := targetVerdicts(r)
	writeTargets(w, verdicts)
	w("%s\n", findings)
	if len(r.Failures) > 0 {
		w("## Parts that did not complete\n\n| part | error |\n|---|---|\n")
		for _, f := range r.Failures {
			w("| %s | %s |\n", f.Part, cell(f.Error))
		}
		w("\n")
	}
	writeAPI(w, r)
	for _, s := range sections {
		s(w, r)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := chart(png, r); err != nil {
		return fmt.Errorf("chart %s: %w", png, err)
	}
	return nil
}

// findings is the hand-written analysis of the committed run: why each
// target that fell short did, from that run's evidence.
//
//go:embed findings.md
var findings string

// sections render the parts after the API path, in the order.
var sections = []func(func(string, ...any), *Results){writeStart, writeWrites, writeLauncher, writeConsole, writeNetwork, writeDebian, writeMigration, writeDensity}

func writeMachine(w func(string, ...any), r *Results) {
	m := r.Machine
	w("## The machine\n\n| | |\n|---|---|\n")
	w("| CPU | %s |\n| cores | %d |\n| memory | %d MiB |\n| kernel | %s |\n| OS | %s |\n", m.CPU, m.Cores, m.MemoryMiB, m.Kernel, m.OS)
	w("| virtualization | %s |\n| load average at start | %s |\n| Kubernetes | %s |\n| Go | %s |\n", m.Virtualization, m.LoadAverage, m.Kubernetes, m.Go)
	names := make([]string, 0, len(m.Packages))
	for n := range m.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w("| %s | %s |\n", n, m.Packages[n])
	}
	w("\nThe machine is shared: other engineers compiled and tested on it during the run, so absolute numbers are noisy; the ratios are what the run is for.\n\n")
}

// Verdict is one target of issue 9 and whether the run met it.
type Verdict struct {
	Target, Measured string
	// Met is "yes", "no" or "not measured".
	Met string
}

func writeTargets(w func(string, ...any), vs []Verdict) {
	w("## Targets\n\n| target | measured | met |\n|---|---|---|\n")
	for _, v := range vs {
		w("| %s | %s | %s |\n", v.Target, v.Measured, v.Met)
	}
	w("\n")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
