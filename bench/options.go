package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Options of a run. The defaults take about 40 minutes on the
// project's 2-core machine.
type Options struct {
	// Parts to run: api, start, writes, launcher, console, network, debian,
	// migration, density.
	Parts []string
	// Output is the markdown report; the chart goes beside it (.png) and
	// the raw results too (.json).
	Output string
	// FromJSON renders the report of an earlier run instead of measuring.
	FromJSON string
	// Merge is the results of an earlier run (its .json) that the parts
	// of this run replace their own in; the other parts stay as they were.
	Merge string

	Clients        []int
	CreateDuration time.Duration
	MaxCreates     int
	Gets           int
	ListSizes      []int
	ListReps       int

	StartCounts  []int
	StartTimeout time.Duration

	WriteVMIs int
	WriteIdle time.Duration

	ConsoleKeystrokes int
	ConsoleBlocks     int

	NetworkDownloads int
	NetworkRequests  int

	DebianRuns    int
	DebianTimeout time.Duration

	MigrationRuns    int
	MigrationTimeout time.Duration
	MigrationSides   []string

	DensityVMIs    int
	DensityTimeout time.Duration

	ProfileDir      string
	ProfileClients  int
	ProfileDuration time.Duration

	WebhookBinary string
	WebhookAddr   string
	LauncherBin   string
	ImagecopyBin  string
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Parts, "parts", []string{"api", "start", "writes", "launcher", "console", "network", "debian", "migration", "density"}, "parts to run")
	fs.StringVar(&o.Output, "output", "docs/performance.md", "report to write (chart: .png beside it; raw results: .json)")
	fs.StringVar(&o.FromJSON, "from-json", "", "render the report from this results file instead of measuring")
	fs.StringVar(&o.Merge, "merge", "", "results file of an earlier run (e.g. docs/performance.json) to merge this run's parts into: the report keeps its other parts and says when the merged ones were measured")
	fs.IntSliceVar(&o.Clients, "clients", []int{1, 8, 32}, "concurrent clients of the create runs")
	fs.DurationVar(&o.CreateDuration, "create-duration", 6*time.Second, "length of each create run")
	fs.IntVar(&o.MaxCreates, "max-creates", 1500, "most creates of one create run")
	fs.IntVar(&o.Gets, "gets", 300, "GETs per target")
	fs.IntSliceVar(&o.ListSizes, "list-sizes", []int{1000, 10000}, "collection sizes to LIST (the last also for memory)")
	fs.IntVar(&o.ListReps, "list-reps", 5, "LISTs per target and size")
	fs.StringVar(&o.ProfileDir, "profile-dir", "_output/bench", "where CPU profiles of the servers under create load go (empty: none)")
	fs.IntVar(&o.ProfileClients, "profile-clients", 32, "concurrent clients while profiling")
	fs.DurationVar(&o.ProfileDuration, "profile-duration", 10*time.Second, "load per profile (the profile is 2s shorter)")
	fs.IntSliceVar(&o.StartCounts, "start-counts", []int{1, 10, 30}, "VMIs started at once")
	fs.DurationVar(&o.StartTimeout, "start-timeout", 4*time.Minute, "how long a batch of VMIs may take to reach the serial marker")
	fs.IntVar(&o.WriteVMIs, "write-vmis", 5, "VMIs whose lifecycle writes are counted")
	fs.DurationVar(&o.WriteIdle, "write-idle", 20*time.Second, "idle window measuring the cluster's background writes")
	fs.IntVar(&o.ConsoleKeystrokes, "console-keystrokes", 200, "keystrokes timed per console path")
	fs.IntVar(&o.ConsoleBlocks, "console-blocks", 4, "blocks the console keystrokes are sent in, alternating between the paths")
	fs.IntVar(&o.NetworkDownloads, "network-downloads", 5, "downloads of the guest's 64 MiB file timed per network path, alternating between the paths")
	fs.IntVar(&o.NetworkRequests, "network-requests", 200, "small requests timed per network path, each on a fresh connection, alternating between the paths")
	fs.IntVar(&o.DebianRuns, "debian-runs", 2, "boots of the Debian guest to its first SSH login per side (a VMI, raw libvirt), alternating between the sides, one guest at a time (about 1-2 min each under software emulation)")
	fs.DurationVar(&o.DebianTimeout, "debian-timeout", 5*time.Minute, "how long one Debian guest may take from its POST or define to its first SSH login")
	fs.IntVar(&o.MigrationRuns, "migration-runs", 1, "migrations of each guest (128 and 512 MiB, idle and dirtying) per side (the platform, raw libvirt), raw libvirt first in each round, one guest at a time")
	fs.DurationVar(&o.MigrationTimeout, "migration-timeout", 5*time.Minute, "how long one migration may take from the guest's start to its heartbeat at the target")
	fs.StringSliceVar(&o.MigrationSides, "migration-sides", []string{"platform", "raw"}, "sides the migration part measures (platform, raw; both for the targets)")
	fs.IntVar(&o.DensityVMIs, "density-vmis", 100, "VMIs the density part starts at once, or as many as the node's allocatable resources take (it says which)")
	fs.DurationVar(&o.DensityTimeout, "density-timeout", 20*time.Minute, "how long the density batch may take to reach its last serial marker")
	fs.StringVar(&o.WebhookBinary, "webhook-binary", "", "virt-bench-webhook (default: beside this binary)")
	fs.StringVar(&o.WebhookAddr, "webhook-addr", "198.18.0.1:9443", "where the twin's webhook listens (the node's address)")
	fs.StringVar(&o.LauncherBin, "launcher-binary", "", "virt-launcher for the private-libvirtd comparison (default: beside this binary)")
	fs.StringVar(&o.ImagecopyBin, "imagecopy-binary", "", "virt-imagecopy, the kernel-boot holder of that comparison (default: beside this binary)")
}

// Validate checks the options.
func (o *Options) Validate() error {
	for _, p := range o.Parts {
		switch p {
		case "api", "start", "writes", "launcher", "console", "network", "debian", "migration", "density":
		default:
			return fmt.Errorf("--parts: unknown part %q", p)
		}
	}
	if o.CreateDuration <= 0 || o.CreateDuration > 5*time.Minute {
		return fmt.Errorf("--create-duration must be in (0, 5m]")
	}
	for _, s := range o.ListSizes {
		if s <= 0 || s > 50000 {
			return fmt.Errorf("--list-sizes must be in (0, 50000]")
		}
	}
	for _, c := range append(append([]int{}, o.Clients...), o.StartCounts...) {
		if c <= 0 || c > 128 {
			return fmt.Errorf("--clients and --start-counts must be in (0, 128]")
		}
	}
	if o.ConsoleKeystrokes <= 0 || o.ConsoleKeystrokes > 10000 {
		return fmt.Errorf("--console-keystrokes must be in (0, 10000]")
	}
	if o.ConsoleBlocks <= 0 || o.ConsoleBlocks > o.ConsoleKeystrokes {
		return fmt.Errorf("--console-blocks must be in (0, --console-keystrokes]")
	}
	if o.NetworkDownloads <= 0 || o.NetworkDownloads > 100 {
		return fmt.Errorf("--network-downloads must be in (0, 100]")
	}
	if o.NetworkRequests <= 0 || o.NetworkRequests > 10000 {
		return fmt.Errorf("--network-requests must be in (0, 10000]")
	}
	if o.DebianRuns <= 0 || o.DebianRuns > 20 {
		return fmt.Errorf("--debian-runs must be in (0, 20]")
	}
	if o.DebianTimeout <= 0 || o.DebianTimeout > 30*time.Minute {
		return fmt.Errorf("--debian-timeout must be in (0, 30m]")
	}
	if o.MigrationRuns <= 0 || o.MigrationRuns > 20 {
		return fmt.Errorf("--migration-runs must be in (0, 20]")
	}
	if o.MigrationTimeout <= 0 || o.MigrationTimeout > 30*time.Minute {
		return fmt.Errorf("--migration-timeout must be in (0, 30m]")
	}
	for _, s := range o.MigrationSides {
		if s != "platform" && s != "raw" {
			return fmt.Errorf("--migration-sides: unknown side %q (platform, raw)", s)
		}
	}
	if o.DensityVMIs <= 0 || o.DensityVMIs > 500 {
		return fmt.Errorf("--density-vmis must be in (0, 500]")
	}
	if o.DensityTimeout <= 0 || o.DensityTimeout > time.Hour {
		return fmt.Errorf("--density-timeout must be in (0, 1h]")
	}
	if o.Merge != "" && o.FromJSON != "" {
		return fmt.Errorf("--merge measures and --from-json does not: give one")
	}
	return nil
}

// String is the options that shape the measurements, for the report.
func (o *Options) String() string {
	return fmt.Sprintf("--parts=%s --clients=%s --create-duration=%s --max-creates=%d --gets=%d --list-sizes=%s --list-reps=%d --profile-clients=%d --profile-duration=%s --start-counts=%s --start-timeout=%s --write-vmis=%d --write-idle=%s --console-keystrokes=%d --console-blocks=%d --network-downloads=%d --network-requests=%d --debian-runs=%d --debian-timeout=%s --migration-runs=%d --migration-timeout=%s --migration-sides=%s --density-vmis=%d --density-timeout=%s",
		strings.Join(o.Parts, ","), ints(o.Clients), o.CreateDuration, o.MaxCreates, o.Gets, ints(o.ListSizes), o.ListReps,
		o.ProfileClients, o.ProfileDuration, ints(o.StartCounts), o.StartTimeout, o.WriteVMIs, o.WriteIdle, o.ConsoleKeystrokes, o.ConsoleBlocks,
		o.NetworkDownloads, o.NetworkRequests, o.DebianRuns, o.DebianTimeout, o.MigrationRuns, o.MigrationTimeout, strings.Join(o.MigrationSides, ","),
		o.DensityVMIs, o.DensityTimeout)
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// defaultBinaries finds the webhook and the launcher beside this binary,
// where make bench builds them, unless flags name them.
func (o *Options) defaultBinaries() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.WebhookBinary == "" {
		o.WebhookBinary = filepath.Join(filepath.Dir(self), "virt-bench-webhook")
	}
	if o.LauncherBin == "" {
		o.LauncherBin = filepath.Join(filepath.Dir(self), "virt-launcher")
	}
	if o.ImagecopyBin == "" {
		o.ImagecopyBin = filepath.Join(filepath.Dir(self), "virt-imagecopy")
	}
	return nil
}

func (o *Options) has(part string) bool {
	for _, p := range o.Parts {
		if p == part {
			return true
		}
	}
	return false
}
