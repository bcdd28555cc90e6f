package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/endpoint"
	"kubevirt.dev/virt/bench/machine"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/overhead"
	"kubevirt.dev/virt/bench/report"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/bench/writecount"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Run measures the selected parts and writes the report. A part that fails
// is reported as such and the others still run.
func Run(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.FromJSON != "" {
		var res report.Results
		b, err := os.ReadFile(o.FromJSON)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("read %s: %w", o.FromJSON, err)
		}
		regroupProfiles(&res)
		return report.Write(o.Output, &res)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the benchmarks use the local cluster and read other processes' memory: run them as root")
	}
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
	start := time.Now()
	res := &report.Results{Started: start, Parts: o.Parts, Flags: o.String()}
	if res.Machine, err = machine.Describe(ctx); err != nil {
		logf("machine: %v", err)
	}
	cluster, err := framework.Setup(ctx)
	if err != nil {
		return fmt.Errorf("local cluster: %w", err)
	}
	defer func() {
		if err := cluster.Teardown(context.WithoutCancel(ctx)); err != nil {
			logf("teardown: %v", err)
		}
	}()
	if err := unthrottle(cluster); err != nil {
		return err
	}
	res.Machine.Kubernetes = clusterVersion(cluster.Config)
	var errs []error
	fail := func(part string, err error) {
		logf("%s: FAILED: %v", part, err)
		res.Failures = append(res.Failures, report.Failure{Part: part, Error: err.Error()})
		errs = append(errs, fmt.Errorf("%s: %w", part, err))
	}
	if o.has("api") && ctx.Err() == nil {
		logf("part 1: the API path")
		ext, err := apiextensionsclient.NewForConfig(cluster.Config)
		if err != nil {
			return err
		}
		res.API, err = apipath.Run(ctx, apipath.Env{
			Kube: cluster.Kube, Ext: ext, Dyn: cluster.Dynamic, Config: cluster.Config, State: cluster.State,
			WebhookBinary: o.WebhookBinary, WebhookAddr: o.WebhookAddr, Logf: logf,
		}, apipath.Options{
			Clients: o.Clients, CreateDuration: o.CreateDuration, MaxCreates: o.MaxCreates, Gets: o.Gets, ListSizes: o.ListSizes, ListReps: o.ListReps,
			ProfileDir: o.ProfileDir, ProfileClients: o.ProfileClients, ProfileDuration: o.ProfileDuration,
		})
		if err != nil {
			fail("api", err)
		}
	}
	if o.has("start") && ctx.Err() == nil {
		logf("part 2: start latency, ours against raw libvirt")
		guest, err := buildGuest(ctx, cluster.Root)
		if err != nil {
			fail("start", err)
		} else if res.Start, err = startup.Run(ctx, startup.Env{
			Kube: cluster.Kube, Virt: cluster.Virt, KubeletRoot: cluster.KubeletRoot, Logf: logf,
		}, startup.Options{Counts: o.StartCounts, Timeout: o.StartTimeout, Guest: guest}); err != nil {
			fail("start", err)
		}
	}
	if o.has("writes") && ctx.Err() == nil {
		logf("part 3: API writes per VMI lifecycle")
		if res.Writes, err = runWrites(ctx, cluster, o); err != nil {
			fail("writes", err)
		}
	}
	if o.has("launcher") && ctx.Err() == nil {
		logf("part 4: launcher overhead")
		guest, err := buildGuest(ctx, cluster.Root)
		if err != nil {
			fail("launcher", err)
		} else if res.Launcher, err = overhead.Run(ctx, overhead.Env{
			Kube: cluster.Kube, Virt: cluster.Virt, KubeletRoot: cluster.KubeletRoot,
			LauncherBinary: o.LauncherBin, Guest: guest, Logf: logf,
		}, o.StartTimeout); err != nil {
			fail("launcher", err)
		}
	}
	res.Elapsed = time.Since(start)
	if err := saveJSON(strings.TrimSuffix(o.Output, filepath.Ext(o.Output))+".json", res); err != nil {
		errs = append(errs, err)
	}
	if err := report.Write(o.Output, res); err != nil {
		errs = append(errs, err)
	}
	logf("done in %s", res.Elapsed.Round(time.Second))
	return errors.Join(errs...)
}

// unthrottle replaces the framework's clients with ones without client-go's
// client-side rate limit (5 QPS): a batch of 30 POSTs would otherwise
// wait seconds in the client, and that wait would count as start latency.
func unthrottle(c *framework.Cluster) error {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.UserAgent = "virt-bench"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	virt, err := virtclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c.Config, c.Kube, c.Virt, c.Dynamic = cfg, kube, virt, dyn
	return nil
}

// accessNamespace holds the service account parts 3 and 4 read
// virt-apiserver's /metrics with.
const accessNamespace = "bench-access"

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

// regroupProfiles recomputes the CPU groups from the saved profiles, so a
// re-render follows changes of apipath.Buckets.
func regroupProfiles(res *report.Results) {
	if res.API == nil {
		return
	}
	for i, p := range res.API.Profiles {
		if _, err := os.Stat(p.File); err != nil {
			continue
		}
		if _, shares, err := apipath.Shares(p.File); err == nil {
			res.API.Profiles[i].Shares = shares
		}
	}
}

func saveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func clusterVersion(cfg *rest.Config) string {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return ""
	}
	resp, err := c.Get(cfg.Host + "/version")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.GitVersion
}
