package apipath

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// writeCPUProfile saves a CPU profile whose samples have the given
// stacks (function names, leaf first) and CPU times.
func writeCPUProfile(t *testing.T, samples map[time.Duration][]string) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     int64(10 * time.Millisecond),
	}
	fns := map[string]*profile.Location{}
	for cpu, stack := range samples {
		s := &profile.Sample{Value: []int64{int64(cpu / (10 * time.Millisecond)), int64(cpu)}}
		for _, name := range stack {
			loc, ok := fns[name]
			if !ok {
				id := uint64(len(fns) + 1)
				fn := &profile.Function{ID: id, Name: name, SystemName: name, Filename: "x.go"}
				loc = &profile.Location{ID: id, Line: []profile.Line{{Function: fn, Line: 1}}}
				fns[name] = loc
				p.Function = append(p.Function, fn)
				p.Location = append(p.Location, loc)
			}
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	file := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestSharesCountSamplesWithAFrameInEachBucket(t *testing.T) {
	file := writeCPUProfile(t, map[time.Duration][]string{
		300 * time.Millisecond: {"crypto/tls.(*Conn).Write", "net/http.(*http2serverConn).serve"},
		100 * time.Millisecond: {"runtime.mallocgc", "encoding/json.Marshal", "net/http.(*http2serverConn).runHandler"},
		600 * time.Millisecond: {"main.work"},
	})
	total, shares, err := Shares(file)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1.0 {
		t.Errorf("total = %v s, want 1", total)
	}
	for bucket, want := range map[string]float64{
		"HTTP/2 framing + TLS + socket I/O": 0.3,
		"decode + encode":                   0.1,
		"Go GC + allocation":                0.1,
		"admission":                         0,
	} {
		if got := shares[bucket]; got != want {
			t.Errorf("share of %q = %v, want %v", bucket, got, want)
		}
	}
}

func TestSharesRefusesWhatIsNotAProfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not.pprof")
	if err := os.WriteFile(file, []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Shares(file); err == nil {
		t.Fatal("garbage parsed as a profile")
	}
}
