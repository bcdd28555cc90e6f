package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/bench/apipath"
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
	return r
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
		"## 1. The API path", "## 2. Start latency", "## 3. API writes per VMI lifecycle", "## 4. Launcher overhead",
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
