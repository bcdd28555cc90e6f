package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/console"
	"kubevirt.dev/virt/bench/debian"
	"kubevirt.dev/virt/bench/density"
	"kubevirt.dev/virt/bench/endpoint"
	"kubevirt.dev/virt/bench/migration"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/network"
	"kubevirt.dev/virt/bench/overhead"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/bench/writecount"
	"kubevirt.dev/virt/test/e2e/framework"
)

// runAPI is part 1, the API path.
func runAPI(ctx context.Context, cluster *framework.Cluster, ext apiextensionsclient.Interface, o Options) (*apipath.Result, error) {
	return apipath.Run(ctx, apipath.Env{
		Kube: cluster.Kube, Ext: ext, Dyn: cluster.Dynamic, Config: cluster.Config, State: cluster.State,
		WebhookBinary: o.WebhookBinary, WebhookAddr: o.WebhookAddr, Logf: logf,
	}, apipath.Options{
		Clients: o.Clients, CreateDuration: o.CreateDuration, MaxCreates: o.MaxCreates, Gets: o.Gets, ListSizes: o.ListSizes, ListReps: o.ListReps,
		ProfileDir: o.ProfileDir, ProfileClients: o.ProfileClients, ProfileDuration: o.ProfileDuration,
	})
}

// runStart is part 2, start latency against raw libvirt, which boots the
// guest's kernel and initrd directly.
func runStart(ctx context.Context, cluster *framework.Cluster, o Options) (*startup.Result, error) {
	guest, err := buildGuest(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	return startup.Run(ctx, startupEnv(cluster), startup.Options{Counts: o.StartCounts, Timeout: o.StartTimeout, Guest: guest})
}

// startupEnv is the cluster as the start and density parts use it.
func startupEnv(cluster *framework.Cluster) startup.Env {
	return startup.Env{Kube: cluster.Kube, Virt: cluster.Virt, KubeletRoot: cluster.KubeletRoot, Logf: logf}
}

// accessNamespace holds the service account parts 3 and 4 read
// virt-apiserver's /metrics with.
const accessNamespace = "bench-access"

// runWrites is part 3, API writes per VMI lifecycle, read from both
// servers' /metrics.
func runWrites(ctx context.Context, cluster *framework.Cluster, o Options) (res *writecount.Result, err error) {
	servers, done, err := metricServers(ctx, cluster)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, done()) }()
	return writecount.Run(ctx, writecount.Env{Kube: cluster.Kube, Virt: cluster.Virt, Servers: servers, Logf: logf},
		writecount.Options{VMIs: o.WriteVMIs, Idle: o.WriteIdle, Timeout: o.StartTimeout})
}

// metricServers are both servers' /metrics; done removes the access.
func metricServers(ctx context.Context, cluster *framework.Cluster) ([]writecount.Server, func() error, error) {
	cleanup := context.WithoutCancel(ctx)
	done := func() error {
		return errors.Join(endpoint.Revoke(cleanup, cluster.Kube), namespace.Delete(cleanup, cluster.Kube, 2*time.Minute, accessNamespace))
	}
	if err := namespace.Create(ctx, cluster.Kube, accessNamespace); err != nil {
		return nil, done, err
	}
	direct, err := endpoint.Direct(ctx, cluster.Kube, cluster.Dynamic, accessNamespace)
	if err != nil {
		return nil, done, errors.Join(err, done())
	}
	directHTTP, err := endpoint.HTTPClient(direct)
	if err != nil {
		return nil, done, errors.Join(err, done())
	}
	kubeHTTP, err := endpoint.HTTPClient(cluster.Config)
	if err != nil {
		return nil, done, errors.Join(err, done())
	}
	return []writecount.Server{
		{Name: writecount.VirtAPIServer, Client: directHTTP, URL: direct.Host + "/metrics"},
		{Name: writecount.KubeAPIServer, Client: kubeHTTP, URL: cluster.Config.Host + "/metrics"},
	}, done, nil
}

// runLauncher is part 4, the launcher's memory; its host-side runs boot
// the guest's kernel and initrd directly.
func runLauncher(ctx context.Context, cluster *framework.Cluster, o Options) (*overhead.Result, error) {
	guest, err := buildGuest(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	return overhead.Run(ctx, overhead.Env{
		Kube: cluster.Kube, Virt: cluster.Virt, KubeletRoot: cluster.KubeletRoot,
		LauncherBinary: o.LauncherBin, ImagecopyBinary: o.ImagecopyBin, Guest: guest, Logf: logf,
	}, o.StartTimeout)
}

// runConsole is part 5, the console's keystroke echo through the
// aggregator against QEMU's socket on the node, on the example VMI.
func runConsole(ctx context.Context, cluster *framework.Cluster, o Options) (*console.Result, error) {
	return console.Run(ctx, console.Env{
		Kube: cluster.Kube, Virt: cluster.Virt, Config: cluster.Config, KubeletRoot: cluster.KubeletRoot,
		VMIFile: filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml"), Logf: logf,
	}, console.Options{Keystrokes: o.ConsoleKeystrokes, Blocks: o.ConsoleBlocks, Timeout: o.StartTimeout})
}

// runNetwork is part 6, guest networking: downloads and small requests
// through the masquerade binding against the same guest on a plain tap
// under raw libvirt, which boots the guest's kernel and initrd directly.
func runNetwork(ctx context.Context, cluster *framework.Cluster, o Options) (*network.Result, error) {
	guest, err := buildGuest(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	return network.Run(ctx, network.Env{Kube: cluster.Kube, Virt: cluster.Virt, Guest: guest, Logf: logf},
		network.Options{Downloads: o.NetworkDownloads, Requests: o.NetworkRequests, Timeout: o.StartTimeout})
}

// runDebian is part 7, a Debian cloud guest from POST to its first SSH
// login against the same domain under raw libvirt, whose disk is the
// image of hack/build-debian-image.sh.
func runDebian(ctx context.Context, cluster *framework.Cluster, o Options) (*debian.Result, error) {
	image, err := buildDebianImage(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	return debian.Run(ctx, debian.Env{
		Kube: cluster.Kube, Virt: cluster.Virt,
		VMFile: filepath.Join(cluster.Root, "artifacts", "examples", "vm-debian.yaml"), Image: image, Logf: logf,
	}, debian.Options{Runs: o.DebianRuns, Timeout: o.DebianTimeout})
}

// runMigration is part 8, live migration: the test guest moved by a
// VirtualMachineInstanceMigration against the same domain moved peer to
// peer between two libvirts on this machine.
func runMigration(ctx context.Context, cluster *framework.Cluster, o Options) (*migration.Result, error) {
	guest, err := buildGuest(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	var sides []string
	for _, s := range o.MigrationSides {
		sides = append(sides, map[string]string{"platform": migration.Platform, "raw": migration.Raw}[s])
	}
	return migration.Run(ctx, migration.Env{Cluster: cluster, Guest: guest, Logf: logf},
		migration.Options{Runs: o.MigrationRuns, Timeout: o.MigrationTimeout, Sides: sides})
}

// runDensity is part 9: as many VMIs of the test guest as the node has
// room for (up to --density-vmis) started at once, against as many domains
// under raw libvirt.
func runDensity(ctx context.Context, cluster *framework.Cluster, o Options) (*density.Result, error) {
	guest, err := buildGuest(ctx, cluster.Root)
	if err != nil {
		return nil, err
	}
	return density.Run(ctx, startupEnv(cluster), density.Options{VMIs: o.DensityVMIs, Timeout: o.DensityTimeout, Guest: guest})
}

// buildDebianImage runs hack/build-debian-image.sh (instant when built)
// for the raw libvirt side's disk.
func buildDebianImage(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "build-debian-image.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/build-debian-image.sh: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "disk.qcow2"), nil
}

// buildGuest runs hack/build-guest.sh (instant when built) for the raw
// libvirt side's kernel and initrd.
func buildGuest(ctx context.Context, root string) (startup.Guest, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "build-guest.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return startup.Guest{}, fmt.Errorf("hack/build-guest.sh: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	return startup.Guest{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.gz")}, nil
}
