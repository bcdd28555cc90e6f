package debian

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// The sides alternate, each first every other round, one boot at a time,
// and every boot is kept in the order it ran.
func TestMeasureAlternates(t *testing.T) {
	var log []string
	fake := func(side string) bootFunc {
		return func(_ context.Context, i int) (Boot, error) {
			log = append(log, side[:3]+string(rune('1'+i)))
			return Boot{Running: time.Duration(i+1) * time.Second, SSH: time.Duration(60+i) * time.Second, Probes: 3}, nil
		}
	}
	var done []string
	boots, err := measure(t.Context(), 3, map[string]bootFunc{Platform: fake(Platform), Raw: fake(Raw)}, func(b Boot) { done = append(done, b.Side) })
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields("pla1 raw1 raw2 pla2 pla3 raw3"); !slices.Equal(log, want) {
		t.Errorf("boots ran %v, want %v", log, want)
	}
	if want := []string{Platform, Raw, Raw, Platform, Platform, Raw}; !slices.Equal(done, want) {
		t.Errorf("reported %v, want %v", done, want)
	}
	if len(boots) != 6 || boots[1].Side != Raw || boots[1].SSH != 60*time.Second {
		t.Errorf("boots %+v", boots)
	}
}

// The first failure ends the measurement and names the side and the boot;
// a cancelled context starts no boot.
func TestMeasureStops(t *testing.T) {
	calls := 0
	ok := func(context.Context, int) (Boot, error) { calls++; return Boot{}, nil }
	broken := func(_ context.Context, i int) (Boot, error) {
		calls++
		if i == 1 {
			return Boot{}, errors.New("no lease")
		}
		return Boot{}, nil
	}
	_, err := measure(t.Context(), 3, map[string]bootFunc{Platform: ok, Raw: broken}, func(Boot) {})
	if err == nil || err.Error() != Raw+", boot 2: no lease" {
		t.Fatalf("err = %v, want the raw side's second boot to fail", err)
	}
	if calls != 3 {
		t.Errorf("%d boots ran, want 3 (platform 1, raw 1, raw 2)", calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls = 0
	if _, err := measure(ctx, 2, map[string]bootFunc{Platform: ok, Raw: ok}, func(Boot) {}); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled: err %v after %d boots, want context.Canceled and none", err, calls)
	}
}

func TestSummarize(t *testing.T) {
	s := time.Second
	rows := summarize([]Boot{
		{Side: Platform, Running: 12 * s, SSH: 80 * s},
		{Side: Raw, Running: s, SSH: 61 * s},
		{Side: Raw, Running: 3 * s, SSH: 59 * s},
		{Side: Platform, Running: 10 * s, SSH: 70 * s},
		{Side: Platform, Running: 11 * s, SSH: 75 * s},
	})
	if len(rows) != 2 || rows[0].Side != Platform || rows[1].Side != Raw {
		t.Fatalf("rows %+v, want the platform's then raw libvirt's", rows)
	}
	p, q := rows[0], rows[1]
	if p.SSHMedian != 75*s || p.RunningMedian != 11*s || p.MinSSH != 70*s || p.MaxSSH != 80*s || !slices.Equal(p.SSH, []time.Duration{80 * s, 70 * s, 75 * s}) {
		t.Errorf("platform %+v", p)
	}
	// Of two, the median is their mean.
	if q.SSHMedian != 60*s || q.RunningMedian != 2*s {
		t.Errorf("raw %+v", q)
	}
	res := &Result{Rows: rows}
	if x, ok := res.Ratio(); !ok || x != 1.25 {
		t.Errorf("ratio %v, %v; want 1.25", x, ok)
	}
	if x, ok := (&Result{Rows: rows[:1]}).Ratio(); ok {
		t.Errorf("ratio %v without raw libvirt's boots", x)
	}
	if rows := summarize(nil); len(rows) != 0 {
		t.Errorf("rows of no boots: %+v", rows)
	}
}
