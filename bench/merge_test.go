package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/console"
	"kubevirt.dev/virt/bench/debian"
	"kubevirt.dev/virt/bench/density"
	"kubevirt.dev/virt/bench/migration"
	"kubevirt.dev/virt/bench/network"
	"kubevirt.dev/virt/bench/overhead"
	"kubevirt.dev/virt/bench/report"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/bench/writecount"
)

func TestMerge(t *testing.T) {
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := first.Add(24 * time.Hour)
	oldConsole := &console.Result{Keystrokes: 1}
	newConsole := &console.Result{Keystrokes: 2}
	writes := &writecount.Result{VMIs: 5}
	launcher := &overhead.Result{Notes: []string{"old"}}
	for _, tc := range []struct {
		name string
		base *report.Results
		run  *report.Results
		want *report.Results
	}{{
		name: "a new part is added, the others stay",
		base: &report.Results{Started: first, Parts: []string{"writes", "launcher"}, Writes: writes, Launcher: launcher,
			Failures: []report.Failure{{Part: "launcher", Error: "old"}}},
		run: &report.Results{Started: later, Elapsed: time.Minute, Parts: []string{"console"}, Flags: "--parts=console", Console: newConsole},
		want: &report.Results{Started: first, Parts: []string{"writes", "launcher", "console"}, Writes: writes, Launcher: launcher, Console: newConsole,
			Failures: []report.Failure{{Part: "launcher", Error: "old"}},
			Merged:   []report.Run{{Parts: []string{"console"}, Started: later, Elapsed: time.Minute, Flags: "--parts=console"}}},
	}, {
		name: "a part measured again replaces its result, failure and earlier merge",
		base: &report.Results{Started: first, Parts: []string{"writes", "console"}, Writes: writes, Console: oldConsole,
			Failures: []report.Failure{{Part: "console", Error: "old"}},
			Merged:   []report.Run{{Parts: []string{"console"}, Started: first.Add(time.Hour)}}},
		run: &report.Results{Started: later, Parts: []string{"console", "launcher"}, Console: newConsole,
			Failures: []report.Failure{{Part: "launcher", Error: "new"}}},
		want: &report.Results{Started: first, Parts: []string{"writes", "console", "launcher"}, Writes: writes, Console: newConsole,
			Failures: []report.Failure{{Part: "launcher", Error: "new"}},
			Merged:   []report.Run{{Parts: []string{"console", "launcher"}, Started: later}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			merge(tc.base, tc.run)
			if diff := cmp.Diff(tc.want, tc.base); diff != "" {
				t.Errorf("merged results (-want +got):\n%s", diff)
			}
		})
	}
}

// Every part the options accept is merged: its result, and only its.
func TestMergeKnowsEveryPart(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("virt-bench", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range o.Parts {
		base := &report.Results{}
		merge(base, &report.Results{
			Parts: []string{p}, API: &apipath.Result{}, Start: &startup.Result{}, Writes: &writecount.Result{},
			Launcher: &overhead.Result{}, Console: &console.Result{}, Network: &network.Result{},
			Debian: &debian.Result{}, Migration: &migration.Result{}, Density: &density.Result{},
		})
		set := 0
		for _, r := range []bool{base.API != nil, base.Start != nil, base.Writes != nil, base.Launcher != nil, base.Console != nil, base.Network != nil, base.Debian != nil, base.Migration != nil, base.Density != nil} {
			if r {
				set++
			}
		}
		if set != 1 || !slices.Equal(base.Parts, []string{p}) {
			t.Errorf("merging part %s set %d results and parts %v, want 1 and [%s]", p, set, base.Parts, p)
		}
	}
}
