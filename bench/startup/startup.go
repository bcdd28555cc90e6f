package startup

import (
	"slices"
	"time"

	"kubevirt.dev/virt/bench/load"
	"kubevirt.dev/virt/test/e2e/framework"
)

// Marker is what the test guest prints on its serial console once it is up.
const Marker = framework.GuestReadyMarker

// Paths compared.
const (
	Platform = "platform (POST → VMI Running)"
	Raw      = "raw libvirt (define → running)"
)

// Milestones of a VMI's start on the platform, in order. StepPodInitialized
// is the pod's Initialized condition, its init containers done: the launcher
// pod has none since the kernel-boot files are held in place instead of
// copied (docs/launcher.md "Kernel boot"), so the condition is true from the
// kubelet's first status of the pod.
const (
	StepScheduling     = "VMI Scheduling (launcher pod created)"
	StepPodCreated     = "pod seen"
	StepPodBound       = "pod bound to the node"
	StepPodInitialized = "pod initialized"
	// StepLauncherRunning is the compute container running in the pod's
	// status, which the hand-off waits for (with the holders ready:
	// vmipod.LauncherRunning). StepLauncherReady, the pod's Ready, comes
	// after the hand-off since the node waits for the launcher itself.
	StepLauncherRunning = "launcher container running"
	StepLauncherReady   = "launcher ready (readiness probe)"
	StepScheduled       = "VMI Scheduled (hand-off)"
	StepRunning         = "VMI Running"
)

// Milestones in the order they happen.
var Milestones = []string{StepScheduling, StepPodCreated, StepPodBound, StepPodInitialized, StepLauncherRunning, StepScheduled, StepRunning, StepLauncherReady}

// Row is one batch.
type Row struct {
	Path  string
	Count int
	// ToRunning and ToMarker, p50, p95 and max over the batch's guests.
	RunningP50, RunningP95 time.Duration
	MarkerP50, MarkerP95   time.Duration
	RunningMax, MarkerMax  time.Duration `json:",omitempty"`
	// Failed counts the guests that did not reach the marker in time.
	Failed int
	// Errors say why VMIs that ended (Failed) before their marker did.
	Errors []string `json:",omitempty"`
	// Batch is from the first start to the last marker.
	Batch time.Duration
	// CPU is the machine's CPU seconds during the batch by command name
	// (all processes, the other users' included).
	CPU map[string]float64 `json:",omitempty"`
	// NodeMemory is how much the machine's MemAvailable fell from the
	// batch's first start to its end, all its guests running (bytes).
	NodeMemory int64 `json:",omitempty"`
	// Steps are the p50 times from POST to each milestone (platform only).
	Steps map[string]time.Duration `json:",omitempty"`
}

// formerSteps are earlier names of milestones, under which saved results
// (docs/performance.json) hold them.
var formerSteps = map[string]string{StepPodInitialized: "init containers done (image copies)"}

// Step is the p50 time from POST to the milestone step, found under its
// former name in results saved before it was renamed.
func (r Row) Step(step string) time.Duration {
	if d, ok := r.Steps[step]; ok {
		return d
	}
	return r.Steps[formerSteps[step]]
}

// Result is what the part measured.
type Result struct {
	Rows []Row
	// Notes are facts seen during the run that explain the numbers.
	Notes []string
}

// row summarises per-guest times; a zero time counts as failed.
func row(path string, running, marker []time.Duration, batch time.Duration) Row {
	r := Row{Path: path, Count: len(running), Batch: batch}
	var okRunning, okMarker []time.Duration
	for i := range running {
		if running[i] > 0 {
			okRunning = append(okRunning, running[i])
		}
		if marker[i] > 0 {
			okMarker = append(okMarker, marker[i])
		} else {
			r.Failed++
		}
	}
	slices.Sort(okRunning)
	slices.Sort(okMarker)
	r.RunningP50, r.RunningP95 = load.Quantile(okRunning, 0.5), load.Quantile(okRunning, 0.95)
	r.MarkerP50, r.MarkerP95 = load.Quantile(okMarker, 0.5), load.Quantile(okMarker, 0.95)
	if len(okRunning) > 0 {
		r.RunningMax = okRunning[len(okRunning)-1]
	}
	if len(okMarker) > 0 {
		r.MarkerMax = okMarker[len(okMarker)-1]
	}
	return r
}
