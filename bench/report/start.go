package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"kubevirt.dev/virt/bench/startup"
)

func startRow(s *startup.Result, path string, n int) (startup.Row, bool) {
	for _, r := range s.Rows {
		if r.Path == path && r.Count == n {
			return r, true
		}
	}
	return startup.Row{}, false
}

func startCounts(s *startup.Result) []int {
	var out []int
	for _, r := range s.Rows {
		if r.Path == startup.Platform {
			out = append(out, r.Count)
		}
	}
	return out
}

func sec(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func startVerdicts(r *Results) []Verdict {
	s := r.Start
	v := Verdict{Target: "POST-to-Running p50 within 1 s of raw libvirt (by VMIs started at once)"}
	if s == nil || len(s.Rows) == 0 {
		v.Measured, v.Met = "—", "not measured"
		return []Verdict{v}
	}
	ok := true
	for _, n := range startCounts(s) {
		p, _ := startRow(s, startup.Platform, n)
		q, okRaw := startRow(s, startup.Raw, n)
		if !okRaw {
			ok = false
			v.Measured += fmt.Sprintf("%d: raw not measured; ", n)
			continue
		}
		d := p.RunningP50 - q.RunningP50
		ok = ok && d <= time.Second && p.Failed == 0
		v.Measured += fmt.Sprintf("+%ss at %d; ", sec(d), n)
	}
	v.Met = yesNo(ok)
	return []Verdict{v}
}

func writeStart(w func(string, ...any), r *Results) {
	s := r.Start
	w("## 2. Start latency: ours against raw libvirt\n\n")
	if s == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("The test guest (vmi-tiny's shape: kernel boot of `hack/build-guest.sh`, 128 MiB, TCG; with a 10m CPU request so that 30 launcher pods fit the node's allocatable CPU) started N at once. Platform: from the POST of each VMI to the watch event that shows it `Running`, and to `%s` in the serial log of its launcher pod's private emptyDir on the node (polled every 50 ms). Raw libvirt: the same domain XML (the launcher's converter, `launcher/domain`) defined and started through one `qemu:///embed` connection in a temporary directory, as root, with QEMU's capabilities probed beforehand (a running libvirtd has them); from the define call to `virDomainCreate` returning, and to the marker (polled every 20 ms). Platform and raw batches run one after the other, never together.\n\n", startup.Marker)
	w("| path | VMIs | to Running p50 s | p95 s | to marker p50 s | p95 s | failed | batch s |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range s.Rows {
		w("| %s | %d | %s | %s | %s | %s | %d | %s |\n", x.Path, x.Count, sec(x.RunningP50), sec(x.RunningP95), sec(x.MarkerP50), sec(x.MarkerP95), x.Failed, sec(x.Batch))
	}
	sep := "\n"
	for _, x := range s.Rows {
		for _, e := range x.Errors {
			w("%s- %s, %d: %s\n", sep, x.Path, x.Count, e)
			sep = ""
		}
	}
	w("\n| overhead of the platform (p50) | to Running | to marker |\n|---|---|---|\n")
	for _, n := range startCounts(s) {
		p, _ := startRow(s, startup.Platform, n)
		q, _ := startRow(s, startup.Raw, n)
		w("| %d VMIs | +%s s | +%s s |\n", n, sec(p.RunningP50-q.RunningP50), sec(p.MarkerP50-q.MarkerP50))
	}
	w("\nWhere the platform's time goes: p50 from the POST to each milestone, as seen by watches on the VMIs and the launcher pods.\n\n| milestone | ")
	ns := startCounts(s)
	for _, n := range ns {
		w("%d VMIs s | ", n)
	}
	w("\n|---|")
	for range ns {
		w("---|")
	}
	w("\n")
	for _, step := range startup.Milestones {
		w("| %s | ", step)
		for _, n := range ns {
			p, _ := startRow(s, startup.Platform, n)
			w("%s | ", sec(p.Step(step)))
		}
		w("\n")
	}
	w("\nCPU seconds the machine spent during each batch (until its last marker, or the timeout), by command name, from `/proc/<pid>/stat` (own + reaped children's time; processes of other users included). The largest:\n\n")
	for _, x := range s.Rows {
		if len(x.CPU) == 0 {
			continue
		}
		w("- %s, %d: %s\n", x.Path, x.Count, topCPU(x.CPU, 8))
	}
	w("\n")
	for _, n := range s.Notes {
		w("- %s\n", n)
	}
	w("\n")
}

// topCPU lists the n largest entries and the total.
func topCPU(m map[string]float64, n int) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	var total float64
	for k, v := range m {
		all = append(all, kv{k, v})
		total += v
	}
	// By name among equals: the same results render the same text.
	sort.Slice(all, func(i, j int) bool {
		if all[i].v != all[j].v {
			return all[i].v > all[j].v
		}
		return all[i].k < all[j].k
	})
	var parts []string
	for i, e := range all {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.1f", e.k, e.v))
	}
	return fmt.Sprintf("total **%.1f** s: %s", total, strings.Join(parts, ", "))
}

func startChart(r *Results) (*plot.Plot, error) {
	s := r.Start
	if s == nil || len(s.Rows) == 0 {
		return nil, nil
	}
	ns := startCounts(s)
	cats := make([]string, len(ns))
	for i, n := range ns {
		cats[i] = fmt.Sprintf("%d VMIs at once", n)
	}
	series := []string{"platform: to Running", "raw libvirt: to running", "platform: to marker", "raw libvirt: to marker"}
	return grouped("2. start latency p50 (lower is better)", "s", cats, series, func(si, c int) float64 {
		p, _ := startRow(s, startup.Platform, ns[c])
		q, _ := startRow(s, startup.Raw, ns[c])
		return []float64{p.RunningP50.Seconds(), q.RunningP50.Seconds(), p.MarkerP50.Seconds(), q.MarkerP50.Seconds()}[si]
	})
}
