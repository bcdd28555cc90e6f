package load

import (
	"testing"
	"time"
)

// fakeStorm is a storm record built second by second: perSecond[i] lists
// the outcomes answered in second i (evenly spread), "ok" or a status.
func fakeStorm(began time.Time, perSecond [][]string) *Record {
	rec := &Record{Began: began, Clients: 1}
	for i, outcomes := range perSecond {
		for j, o := range outcomes {
			end := began.Add(time.Duration(i)*time.Second + time.Duration(j+1)*time.Second/time.Duration(len(outcomes)+1))
			r := Request{Verb: Create, Object: "x", Start: end.Add(-time.Millisecond), End: end}
			if o != "ok" {
				r.Err, r.Code = o, 503
			}
			rec.Requests = append(rec.Requests, r)
		}
	}
	rec.Ended = began.Add(time.Duration(len(perSecond)) * time.Second)
	return rec
}

func repeat(o string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = o
	}
	return out
}

func TestAnalyze(t *testing.T) {
	began := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		perSecond [][]string
		// faultAt is the fault's offset from the storm's start.
		faultAt       time.Duration
		warmup        time.Duration
		wantBaseline  float64
		wantFailed    int
		wantImpacted  bool
		wantRecovered bool
		wantTTFC      time.Duration
		wantDowntime  time.Duration
		wantAfter     int
	}{
		{
			// 2 s warm-up (slow), 4 s steady at 10/s, the fault at 6 s:
			// 2 s of failures only, a second at half speed, then full.
			name: "outage and recovery",
			perSecond: [][]string{
				repeat("ok", 2), repeat("ok", 3),
				repeat("ok", 10), repeat("ok", 12), repeat("ok", 10), repeat("ok", 9),
				repeat("fail", 3), nil, repeat("ok", 5), repeat("ok", 10), repeat("ok", 11),
			},
			faultAt:      6 * time.Second,
			warmup:       2 * time.Second,
			wantBaseline: 10, wantFailed: 3, wantImpacted: true, wantRecovered: true,
			wantTTFC: 3 * time.Second,
			// From the last success of second 5 (at 5.9 s) to the first
			// of second 8 (at 8 + 1/6 s).
			wantDowntime: 8*time.Second + time.Second/6 - (5*time.Second + 9*time.Second/10),
		},
		{
			// A failure in an otherwise full second still impacts it;
			// 9 of a baseline of 10 is full capacity.
			name: "one failure",
			perSecond: [][]string{
				repeat("ok", 10), repeat("ok", 10), repeat("ok", 10),
				append(repeat("ok", 9), "fail"), repeat("ok", 9), append(repeat("ok", 10), "fail"),
			},
			faultAt:      3 * time.Second,
			wantBaseline: 10, wantFailed: 2, wantImpacted: true, wantRecovered: true,
			wantTTFC: 1 * time.Second, wantAfter: 1,
			// From the last success of second 3 to the first of second 4.
			wantDowntime: 4*time.Second + time.Second/10 - (3*time.Second + 9*time.Second/11),
		},
		{
			name: "no impact",
			perSecond: [][]string{
				repeat("ok", 10), repeat("ok", 10), repeat("ok", 10), repeat("ok", 9), repeat("ok", 10),
			},
			faultAt:      2 * time.Second,
			wantBaseline: 10, wantRecovered: true, wantDowntime: time.Second/10 + time.Second/11,
		},
		{
			// Never back: the time to full capacity is how long the storm
			// ran after the fault, and not recovered.
			name: "no recovery",
			perSecond: [][]string{
				repeat("ok", 10), repeat("ok", 10), repeat("fail", 4), repeat("ok", 5), repeat("ok", 5),
			},
			faultAt:      2 * time.Second,
			wantBaseline: 10, wantFailed: 4, wantImpacted: true, wantTTFC: 3 * time.Second,
			wantDowntime: 3*time.Second + time.Second/6 - (time.Second + 10*time.Second/11),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fakeStorm(began, tt.perSecond)
			f, err := Analyze(rec, began.Add(tt.faultAt), tt.warmup)
			if err != nil {
				t.Fatal(err)
			}
			if f.Baseline != tt.wantBaseline || f.Failed != tt.wantFailed || f.Impacted != tt.wantImpacted ||
				f.Recovered != tt.wantRecovered || f.TimeToFullCapacity != tt.wantTTFC || f.FailedAfterRecovery != tt.wantAfter {
				t.Errorf("baseline %v failed %d impacted %v recovered %v ttfc %v after %d; want %v %d %v %v %v %d\ntimeline %s",
					f.Baseline, f.Failed, f.Impacted, f.Recovered, f.TimeToFullCapacity, f.FailedAfterRecovery,
					tt.wantBaseline, tt.wantFailed, tt.wantImpacted, tt.wantRecovered, tt.wantTTFC, tt.wantAfter, f.TimelineString())
			}
			if d := f.Downtime - tt.wantDowntime; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("downtime %v, want %v", f.Downtime, tt.wantDowntime)
			}
			if want := float64(tt.wantFailed) / float64(len(rec.Requests)); f.FailedShare != want {
				t.Errorf("failed share %v, want %v", f.FailedShare, want)
			}
		})
	}
}

func TestAnalyzeNeedsABaseline(t *testing.T) {
	began := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := fakeStorm(began, [][]string{repeat("ok", 10), repeat("ok", 10)})
	if _, err := Analyze(rec, began.Add(1500*time.Millisecond), time.Second); err == nil {
		t.Error("a fault half a second after the warm-up has no full second before it, but Analyze found a baseline")
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want float64
	}{{[]int{3}, 3}, {[]int{5, 1, 3}, 3}, {[]int{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestAnalyzeLevelAfter: a level that stays lower to the storm's end is the
// reference of full capacity, a dip that ends is not.
func TestAnalyzeLevelAfter(t *testing.T) {
	began := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steady := func(n, secs int) [][]string {
		var out [][]string
		for range secs {
			out = append(out, repeat("ok", n))
		}
		return out
	}
	storm := func(parts ...[][]string) [][]string {
		var out [][]string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name      string
		perSecond [][]string
		wantLevel float64
		wantTTFC  time.Duration
	}{{
		// One second of failures, then 7/s to the end: the platform
		// settled at 7, which it reached in second 1.
		name:      "level shift",
		perSecond: storm(steady(10, 4), [][]string{repeat("fail", 5)}, steady(7, 24)),
		wantLevel: 7, wantTTFC: time.Second,
	}, {
		// Five seconds at 6/s before the storm is back at 10/s: the dip
		// is the fault's, the time to full capacity counts it.
		name:      "dip that ends",
		perSecond: storm(steady(10, 4), [][]string{repeat("fail", 5)}, steady(6, 5), steady(10, 20)),
		wantLevel: 10, wantTTFC: 6 * time.Second,
	}, {
		// Faster after the fault than before: the baseline stays the
		// reference.
		name:      "faster after",
		perSecond: storm(steady(10, 4), [][]string{repeat("fail", 5)}, steady(8, 2), steady(12, 20)),
		wantLevel: 12, wantTTFC: 3 * time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Analyze(fakeStorm(began, tt.perSecond), began.Add(4*time.Second), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if f.Baseline != 10 || f.Level != tt.wantLevel || !f.Recovered || f.TimeToFullCapacity != tt.wantTTFC {
				t.Errorf("baseline %v level %v recovered %v ttfc %v; want 10 %v true %v\ntimeline %s",
					f.Baseline, f.Level, f.Recovered, f.TimeToFullCapacity, tt.wantLevel, tt.wantTTFC, f.TimelineString())
			}
		})
	}
}
