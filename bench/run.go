package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/apipath"
	"kubevirt.dev/virt/bench/machine"
	"kubevirt.dev/virt/bench/report"
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
		return rerender(o)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the benchmarks use the local cluster and read other processes' memory: run them as root")
	}
	if err := o.defaultBinaries(); err != nil {
		return err
	}
	// Read before measuring: a bad file must not cost a run.
	var base *report.Results
	if o.Merge != "" {
		var err error
		if base, err = readResults(o.Merge); err != nil {
			return fmt.Errorf("--merge: %w", err)
		}
	}
	start := time.Now()
	res := &report.Results{Started: start, Parts: o.Parts, Flags: o.String()}
	var err error
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
	errs, err := measure(ctx, cluster, o, res)
	if err != nil {
		return err
	}
	res.Elapsed = time.Since(start)
	logf("done in %s", res.Elapsed.Round(time.Second))
	if base != nil {
		merge(base, res)
		res = base
	}
	errs = append(errs, writeResults(o.Output, res))
	return errors.Join(errs...)
}

// rerender writes the report of an earlier run from its saved results.
func rerender(o Options) error {
	res, err := readResults(o.FromJSON)
	if err != nil {
		return err
	}
	regroupProfiles(res)
	return report.Write(o.Output, res)
}

// measure runs the selected parts in order into res. A part that fails is
// recorded in res and in failures, and the next part still runs; err is
// for a client that cannot be made, which ends the run.
func measure(ctx context.Context, cluster *framework.Cluster, o Options, res *report.Results) ([]error, error) {
	var failures []error
	var err error
	fail := func(part string, err error) {
		logf("%s: FAILED: %v", part, err)
		res.Failures = append(res.Failures, report.Failure{Part: part, Error: err.Error()})
		failures = append(failures, fmt.Errorf("%s: %w", part, err))
	}
	if o.has("api") && ctx.Err() == nil {
		logf("part 1: the API path")
		ext, err := apiextensionsclient.NewForConfig(cluster.Config)
		if err != nil {
			return failures, err
		}
		if res.API, err = runAPI(ctx, cluster, ext, o); err != nil {
			fail("api", err)
		}
	}
	if o.has("start") && ctx.Err() == nil {
		logf("part 2: start latency, ours against raw libvirt")
		if res.Start, err = runStart(ctx, cluster, o); err != nil {
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
		if res.Launcher, err = runLauncher(ctx, cluster, o); err != nil {
			fail("launcher", err)
		}
	}
	if o.has("console") && ctx.Err() == nil {
		logf("part 5: console keystroke echo, through the aggregator against the node's socket")
		if res.Console, err = runConsole(ctx, cluster, o); err != nil {
			fail("console", err)
		}
	}
	if o.has("network") && ctx.Err() == nil {
		logf("part 6: guest network, masquerade against a plain tap")
		if res.Network, err = runNetwork(ctx, cluster, o); err != nil {
			fail("network", err)
		}
	}
	if o.has("debian") && ctx.Err() == nil {
		logf("part 7: Debian guest, POST to SSH-ready against raw libvirt")
		if res.Debian, err = runDebian(ctx, cluster, o); err != nil {
			fail("debian", err)
		}
	}
	if o.has("migration") && ctx.Err() == nil {
		logf("part 8: live migration against raw libvirt peer to peer")
		if res.Migration, err = runMigration(ctx, cluster, o); err != nil {
			fail("migration", err)
		}
	}
	if o.has("density") && ctx.Err() == nil {
		logf("part 9: density, as many VMIs as fit at once against raw libvirt")
		if res.Density, err = runDensity(ctx, cluster, o); err != nil {
			fail("density", err)
		}
	}
	return failures, nil
}

// writeResults saves the raw results beside the report (.json) and writes
// the report; a failure of one does not stop the other.
func writeResults(output string, res *report.Results) error {
	return errors.Join(
		saveJSON(strings.TrimSuffix(output, filepath.Ext(output))+".json", res),
		report.Write(output, res),
	)
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
