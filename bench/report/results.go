package report

import (
	"time"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/console"
	"kubevirt.dev/virt/bench/debian"
	"kubevirt.dev/virt/bench/density"
	"kubevirt.dev/virt/bench/machine"
	"kubevirt.dev/virt/bench/migration"
	"kubevirt.dev/virt/bench/network"
	"kubevirt.dev/virt/bench/overhead"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/bench/writecount"
)

// Results is everything one run measured; it is also saved as JSON so the
// report can be rendered again (virt-bench --from-json).
type Results struct {
	Started time.Time
	Elapsed time.Duration
	Parts   []string
	// Flags are the options the run was made with.
	Flags     string `json:",omitempty"`
	Machine   machine.Machine
	API       *apipath.Result    `json:",omitempty"`
	Start     *startup.Result    `json:",omitempty"`
	Writes    *writecount.Result `json:",omitempty"`
	Launcher  *overhead.Result   `json:",omitempty"`
	Console   *console.Result    `json:",omitempty"`
	Network   *network.Result    `json:",omitempty"`
	Debian    *debian.Result     `json:",omitempty"`
	Migration *migration.Result  `json:",omitempty"`
	Density   *density.Result    `json:",omitempty"`
	Failures  []Failure          `json:",omitempty"`
	// Merged are later runs of some of the parts, whose results replaced
	// this run's for those parts (virt-bench --merge).
	Merged []Run `json:",omitempty"`
}

// Run is a later run merged into the results.
type Run struct {
	Parts       []string
	Started     time.Time
	Elapsed     time.Duration
	Flags       string
	LoadAverage string `json:",omitempty"`
}

// Failure is a part that did not complete.
type Failure struct {
	Part, Error string
}
