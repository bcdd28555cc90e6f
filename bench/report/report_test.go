package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/console"
	"kubevirt.dev/virt/bench/debian"
	"kubevirt.dev/virt/bench/density"
	"kubevirt.dev/virt/bench/network"
	"kubevirt.dev/virt/bench/overhead"
	"kubevirt.dev/virt/bench/report"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/bench/writecount"
)

func results() *report.Results {
	ms := time.Millisecond
	r := &report.Results{Started: time.Unix(0, 0), Elapsed: time.Minute}
	r.API = &apipath.Result{ObjectBytes: map[string]int{"vmi": 500}}
	for _, c := range []int{1, 8} {
		for tg, rate := range map[string]float64{apipath.TwinJSON: 100, apipath.OursAggJSON: 200, apipath.OursAggProto: 210, apipath.OursDirect: 300, apipath.BuiltinProto: 310} {
			r.API.Creates = append(r.API.Creates, apipath.CreateRow{Target: tg, Clients: c, Rate: rate * float64(c), P50: ms, P99: 2 * ms})
		}
	}
	for tg, p50 := range map[string]time.Duration{apipath.TwinJSON: 100 * ms, apipath.OursAggJSON: 40 * ms, apipath.OursAggProto: 30 * ms, apipath.OursDirect: 20 * ms, apipath.BuiltinProto: 10 * ms, apipath.BuiltinJSON: 15 * ms} {
		r.API.Lists = append(r.API.Lists, apipath.LatencyRow{Target: tg, Objects: 1000, P50: p50})
	}
	r.Start = &startup.Result{Rows: []startup.Row{
		{Path: startup.Platform, Count: 1, RunningP50: 1500 * ms, MarkerP50: 5 * time.Second, Steps: map[string]time.Duration{startup.StepRunning: 1500 * ms}},
		{Path: startup.Raw, Count: 1, RunningP50: 400 * ms, MarkerP50: 4 * time.Second},
	}}
	r.Writes = &writecount.Result{VMIs: 2, CreateChanges: map[string]float64{"VMI ADDED": 1, "VMI MODIFIED": 2}, DeleteChanges: map[string]float64{"VMI DELETED": 1}}
	r.Launcher = &overhead.Result{Measurements: []overhead.Measurement{{Setup: "launcher pod (x)", Own: 30 << 20, PodMinusGuest: 90 << 20}}}
	r.Console = consoleResult(400*time.Microsecond, 2*time.Millisecond)
	r.Network = networkResult(200, 250)
	r.Debian = debianResult()
	return r
}

// debianResult has two boots per side, the platform's 10 s slower to SSH.
func debianResult() *debian.Result {
	s := time.Second
	boots := []debian.Boot{
		{Side: debian.Platform, Running: 12 * s, SSH: 70 * s, Probes: 90},
		{Side: debian.Raw, Running: 300 * time.Millisecond, SSH: 61 * s, Probes: 100},
		{Side: debian.Raw, Running: 200 * time.Millisecond, SSH: 59 * s, Probes: 98},
		{Side: debian.Platform, Running: 10 * s, SSH: 70 * s, Probes: 92},
	}
	return &debian.Result{Namespace: debian.Namespace, Image: "/cache/disk.qcow2", Memory: "512Mi", RunsPerSide: 2, Boots: boots, Rows: []debian.Row{
		{Side: debian.Platform, Running: []time.Duration{12 * s, 10 * s}, SSH: []time.Duration{70 * s, 70 * s}, RunningMedian: 11 * s, SSHMedian: 70 * s, MinSSH: 70 * s, MaxSSH: 70 * s},
		{Side: debian.Raw, Running: []time.Duration{300 * time.Millisecond, 200 * time.Millisecond}, SSH: []time.Duration{61 * s, 59 * s}, RunningMedian: 250 * time.Millisecond, SSHMedian: 60 * s, MinSSH: 59 * s, MaxSSH: 61 * s},
	}, Notes: []string{"raw libvirt: from the define"}}
}

// networkResult has three downloads per path around the given medians.
func networkResult(platform, raw float64) *network.Result {
	ms := time.Millisecond
	return &network.Result{VMI: "bench-network/net", FileBytes: network.FileBytes, Downloads: 3, Requests: 200, Rows: []network.Row{
		{Path: network.Platform, MBps: []float64{platform - 20, platform, platform + 20}, MedianMBps: platform, MinMBps: platform - 20, MaxMBps: platform + 20,
			Requests: 200, Min: ms, P50: 3 * ms, P99: 6 * ms, Max: 9 * ms},
		{Path: network.Raw, MBps: []float64{raw + 10, raw, raw - 10}, MedianMBps: raw, MinMBps: raw - 10, MaxMBps: raw + 10,
			Requests: 200, Min: ms, P50: 2500 * time.Microsecond, P99: 5 * ms, Max: 7 * ms},
	}, Notes: []string{"platform: binding masquerade"}}
}

func consoleResult(direct, aggregator time.Duration) *console.Result {
	return &console.Result{VMI: "bench-console/vmi-tiny", Keystrokes: 200, Blocks: 4, Rows: []console.Row{
		{Path: console.Direct, Keystrokes: 200, Min: direct / 2, P50: direct, P99: 2 * direct, Max: 3 * direct},
		{Path: console.Aggregator, Keystrokes: 200, Min: aggregator / 2, P50: aggregator, P99: 2 * aggregator, Max: 3 * aggregator, Noisy: 1},
	}}
}

// The report carries every table and says which targets were met.
func TestWriteRendersEveryPartAndTheChart(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "performance.md")
	if err := report.Write(md, results()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"## 1. The API path", "## 2. Start latency", "## 3. API writes per VMI lifecycle", "## 4. Launcher overhead", "## 5. Console keystroke echo",
		"## 6. Guest network: masquerade against a plain tap",
		"## 7. Debian guest: POST → SSH-ready against raw libvirt",
		"(512Mi)", "2 boots per side, alternating between the sides",
		"| platform: VMI, pod network (masquerade) | 2 | 11.0 | 70.0 | 70.0 | 70.0 |",
		"| raw libvirt: define + start, plain tap | 2 | 0.2 | 60.0 | 59.0 | 61.0 |",
		"Each boot in the order they ran: 1. platform: VMI, pod network (masquerade): Running 12.0 s, SSH 70.0 s (90 logins tried); 2. raw libvirt: define + start, plain tap: Running 0.3 s, SSH 61.0 s (100 logins tried);",
		"**+10.0 s at the median, 1.17x raw libvirt's** (70.0 s against 60.0 s); to Running +10.8 s.",
		"- raw libvirt: from the define",
		"| guest download throughput through masquerade >= 0.8x a plain tap under raw libvirt (64 MiB over HTTP, median) | 0.80x (200 MB/s against 250 MB/s) | yes |",
		"| platform: masquerade, pod IP | 3 | 200 | 180 | 220 | 200 | 3.00 | 6.00 | 9.00 |",
		"| raw libvirt: plain tap, routed | 3 | 250 | 240 | 260 | 200 | 2.50 | 5.00 | 7.00 |",
		"Each download in the order they ran (MB/s): platform: masquerade, pod IP: 180, 200, 220; raw libvirt: plain tap, routed: 260, 250, 240.",
		"after a warm-up per path that is not timed (downloads: 1, requests: 10),",
		"**0.80x the plain tap's throughput** (target: at least 0.8x); small requests +0.50 ms at p50 and +1.00 ms at p99.",
		"- platform: binding masquerade",
		"| console keystroke echo through the aggregator within 5.00 ms of the node's serial socket at p50 | +1.60 ms (p50 2.00 ms against 0.40 ms) | yes |",
		"| console subresource through the aggregator | 200 | 1.00 | 2.00 | 4.00 | 6.00 | 1 |",
		"**+1.60 ms at p50**",
		"| create throughput through the aggregator >= 1.5x the CRD + webhooks twin (both JSON; by clients) | 2.00x at 1; 2.00x at 8;  | yes |",
		"| LIST through the aggregator >= 1.5x faster than the twin (both JSON, p50; by objects) | 2.50x at 1000;  | yes |",
		"| direct protobuf creates >= 0.9x the built-in resource (ConfigMaps, protobuf; by clients) | 0.97x at 1; 0.97x at 8;  | yes |",
		"+1.10s at 1; ", "3.0 changes of the VMI",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "performance.png")); err != nil || st.Size() < 1000 {
		t.Fatalf("chart: %v", err)
	}
}

// The console target is met within 5 ms of the socket at p50, missed
// beyond, and not measured without both paths.
func TestConsoleTarget(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		console *console.Result
		want    string
	}{
		{"met", consoleResult(ms, 6*ms), "| +5.00 ms (p50 6.00 ms against 1.00 ms) | yes |"},
		{"missed", consoleResult(ms, 6*ms+10*time.Microsecond), "| +5.01 ms (p50 6.01 ms against 1.00 ms) | **no** |"},
		{"not run", nil, "at p50 | — | not measured |"},
		{"aggregator failed", &console.Result{Rows: []console.Row{{Path: console.Direct, Keystrokes: 5, P50: ms}}}, "at p50 | — | not measured |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := results()
			r.Console = tc.console
			text := render(t, r)
			if !strings.Contains(text, tc.want) {
				t.Errorf("report lacks %q", tc.want)
			}
		})
	}
}

// The network target is met from 0.8x the plain tap's median throughput,
// missed below, and not measured without both paths.
func TestNetworkTarget(t *testing.T) {
	const target = "| guest download throughput through masquerade >= 0.8x a plain tap under raw libvirt (64 MiB over HTTP, median) | "
	for _, tc := range []struct {
		name    string
		network *network.Result
		want    string
	}{
		{"met", networkResult(200, 250), target + "0.80x (200 MB/s against 250 MB/s) | yes |"},
		{"faster than raw", networkResult(300, 250), target + "1.20x (300 MB/s against 250 MB/s) | yes |"},
		{"missed", networkResult(199.5, 250), target + "0.80x (200 MB/s against 250 MB/s) | **no** |"},
		{"not run", nil, target + "— | not measured |"},
		{"raw failed", &network.Result{Rows: []network.Row{{Path: network.Platform, MBps: []float64{100}, MedianMBps: 100}}}, target + "— | not measured |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := results()
			r.Network = tc.network
			text := render(t, r)
			if !strings.Contains(text, tc.want) {
				t.Errorf("report lacks %q", tc.want)
			}
			if tc.network == nil && !strings.Contains(text, "## 6. Guest network: masquerade against a plain tap\n\nNot measured in this run.") {
				t.Error("the section of a part not run does not say so")
			}
		})
	}
}

// Part 7 has no target: its section says so when it did not run, and
// gives no ratio without both sides.
func TestDebianNotMeasured(t *testing.T) {
	r := results()
	r.Debian = nil
	if text := render(t, r); !strings.Contains(text, "## 7. Debian guest: POST → SSH-ready against raw libvirt\n\nNot measured in this run.") {
		t.Error("the section of a part not run does not say so")
	}
	r.Debian = debianResult()
	r.Debian.Rows = r.Debian.Rows[:1]
	if text := render(t, r); strings.Contains(text, "at the median") {
		t.Error("a ratio without raw libvirt's boots")
	}
}

// A part merged from a later run says when it was measured.
func TestMergedRunIsNamed(t *testing.T) {
	r := results()
	r.Merged = []report.Run{{Parts: []string{"console"}, Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Elapsed: 90 * time.Second, Flags: "--parts=console", LoadAverage: "1.00 0.50 0.25"}}
	text := render(t, r)
	want := "Except part `console`: measured on 2026-01-02 03:04 UTC by a run of its own that took 1m30s (load average at its start 1.00 0.50 0.25; options `--parts=console`)"
	if !strings.Contains(text, want) {
		t.Errorf("report lacks %q", want)
	}
	if strings.Contains(render(t, results()), "Except part") {
		t.Error("a report without merged runs names one")
	}
}

func render(t *testing.T, r *report.Results) string {
	t.Helper()
	md := filepath.Join(t.TempDir(), "performance.md")
	if err := report.Write(md, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The density section states how many fit and why, both batches'
// unbucketed figures, and the target misses when a guest missed its marker.
func TestDensity(t *testing.T) {
	s := time.Second
	d := &density.Result{Asked: 100, Fit: density.Fit{
		Node: "virt-node", Count: 61, LimitedBy: "memory",
		PodRequests: map[string]string{"memory": "377Mi", "cpu": "20m"},
		Free:        map[string]string{"memory": "23245Mi", "cpu": "1620m", "pods": "103"},
	}, Rows: []startup.Row{
		{Path: startup.Platform, Count: 61, RunningP50: 88 * s, RunningP95: 134 * s, RunningMax: 144 * s, MarkerP50: 133 * s, MarkerP95: 180 * s, MarkerMax: 181 * s, NodeMemory: 61 * 240 << 20},
		{Path: startup.Raw, Count: 61, RunningP50: 2 * s, RunningP95: 3 * s, RunningMax: 4 * s, MarkerP50: 60 * s, MarkerP95: 90 * s, MarkerMax: 95 * s, Failed: 1},
	}}
	text := render(t, &report.Results{Started: time.Unix(0, 0), Elapsed: time.Minute, Density: d})
	for _, want := range []string{
		"## 9. Density",
		"requests cpu 20m, memory 377Mi", "**61 fit; the limit is memory.**",
		"Of a launcher pod's 377 MiB memory request, 128 MiB are the guest's RAM and 249 MiB",
		"| platform (POST → VMI Running) | 61 | 88.00 | 134.00 | 144.00 | 133.00 | 180.00 | 181.00 | 0 | 0.00 | 240 |",
		"| density: 100 VMIs at once (or as many as fit): every guest reaches its marker; POST → Running p95 beside raw libvirt | 61 fit (limited by memory); 0 and 1 missed the marker; p95 134.00 s against 3.00 s (44.67x) | **no** |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
