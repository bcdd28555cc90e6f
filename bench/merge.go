package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"kubevirt.dev/virt/bench/report"
)

// readResults reads the saved results of an earlier run.
func readResults(file string) (*report.Results, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var res report.Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return &res, nil
}

// merge puts what run measured into base, the results of an earlier run
// (--merge): the results and failures of run's parts replace base's, the
// other parts stay as base had them. base records the run, so that the
// report says which parts were measured when and under which options.
func merge(base, run *report.Results) {
	for _, p := range run.Parts {
		switch p {
		case "api":
			base.API = run.API
		case "start":
			base.Start = run.Start
		case "writes":
			base.Writes = run.Writes
		case "launcher":
			base.Launcher = run.Launcher
		case "console":
			base.Console = run.Console
		case "network":
			base.Network = run.Network
		case "debian":
			base.Debian = run.Debian
		case "migration":
			base.Migration = run.Migration
		case "density":
			base.Density = run.Density
		}
		base.Failures = slices.DeleteFunc(base.Failures, func(f report.Failure) bool { return f.Part == p })
		if !slices.Contains(base.Parts, p) {
			base.Parts = append(base.Parts, p)
		}
		// An earlier merge of the part is replaced too.
		for i := range base.Merged {
			base.Merged[i].Parts = slices.DeleteFunc(base.Merged[i].Parts, func(q string) bool { return q == p })
		}
	}
	base.Merged = slices.DeleteFunc(base.Merged, func(m report.Run) bool { return len(m.Parts) == 0 })
	base.Failures = append(base.Failures, run.Failures...)
	base.Merged = append(base.Merged, report.Run{
		Parts: slices.Clone(run.Parts), Started: run.Started, Elapsed: run.Elapsed, Flags: run.Flags,
		LoadAverage: run.Machine.LoadAverage,
	})
}
