package reliability

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/load"
	"kubevirt.dev/virt/test/reliability/report"
)

// The storm's size, from the environment: the defaults fit `make test` on
// the 2-core machine; a heavier storm is a matter of these knobs.
const (
	stormClientsEnv = "RELIABILITY_STORM_CLIENTS"
	stormBeforeEnv  = "RELIABILITY_STORM_BEFORE"
	stormAfterEnv   = "RELIABILITY_STORM_AFTER"
)

// stormShape is how big and how long a storm is.
type stormShape struct {
	clients int
	// before is how long the storm runs before the fault, after how long
	// it runs on after it.
	before, after time.Duration
}

// stormWarmup is the start of the storm left out of the baseline: clients
// connecting, the first objects' caches.
const stormWarmup = 3 * time.Second

// stormUpdates is how often each VM is updated between create and delete.
const stormUpdates = 2

// stormRequestTimeout bounds one request of the storm: longer than any
// answer of a healthy server, short enough that a hung request costs its
// client part of the storm, not all of it.
const stormRequestTimeout = 30 * time.Second

func stormShapeFromEnv() (stormShape, error) {
	s := stormShape{clients: 8, before: 15 * time.Second, after: 45 * time.Second}
	if v := os.Getenv(stormClientsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("%s=%q: want a number of clients, at least 1", stormClientsEnv, v)
		}
		s.clients = n
	}
	for _, d := range []struct {
		env string
		to  *time.Duration
	}{{stormBeforeEnv, &s.before}, {stormAfterEnv, &s.after}} {
		if v := os.Getenv(d.env); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x < 5*time.Second {
				return s, fmt.Errorf("%s=%q: want a duration of at least 5s", d.env, v)
			}
			*d.to = x
		}
	}
	if s.before < stormWarmup+2*time.Second {
		return s, fmt.Errorf("the storm must run at least %s before the fault", stormWarmup+2*time.Second)
	}
	return s, nil
}

// stormDescription says what the storm does, for the report.
func stormDescription() string {
	s, err := stormShapeFromEnv()
	if err != nil {
		return "The storm's environment is invalid: " + err.Error()
	}
	return fmt.Sprintf(`The load of the API faults is a storm of VirtualMachine writes through the
aggregator (`+"`test/reliability/load`"+`): %d clients (`+"`%s`"+`), each creating
VMs one after the other, updating each %d times (a PUT of the whole object
with a new annotation) and deleting it, as fast as the answers come. The
VMs have runStrategy Halted, so no launcher pod ever starts: the storm
measures the API path alone (virt-controller still summarises each VM's
status, as it would for a user's). Each client is the generated typed
clientset on the admin kubeconfig, as a user runs it: client-go's own
behaviour (it retries nothing but a GET on a broken connection, and an
answer with Retry-After), one connection per client configuration,
client-side rate limit at kubectl's 50 requests/s and bursts of 300, each
request bounded to %s. The fault comes %s after the start (`+"`%s`"+`) and
the storm runs on %s after it (`+"`%s`"+`); the first %s are its warm-up.
Before each storm a probe VM like the storm's must have its status written
by virt-controller: after an outage its informers back off for up to 30 s,
and a baseline taken without its writes is too high.`,
		s.clients, stormClientsEnv, stormUpdates, stormRequestTimeout, s.before, stormBeforeEnv, s.after, stormAfterEnv, stormWarmup)
}

// stormClients is one typed clientset per client, each with its own
// configuration as separate users' programs would have.
func stormClients(n int) ([]virtclient.Interface, error) {
	var out []virtclient.Interface
	for i := range n {
		cfg := rest.CopyConfig(cluster.Config)
		cfg.QPS, cfg.Burst = 50, 300
		cfg.UserAgent = fmt.Sprintf("virt-reliability-storm/%d", i)
		c, err := virtclient.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// runStorm runs the storm in ns, calls fault once it ran shape.before, and
// stops it shape.after later. fault returns when the fault happened.
func runStorm(t *testing.T, ns string, shape stormShape, fault func() time.Time) (*load.Record, time.Time) {
	t.Helper()
	vm, err := cluster.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = ""
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	clients, err := stormClients(shape.clients)
	if err != nil {
		t.Fatal(err)
	}
	waitControllerWrites(t, ns, vm)
	cpu, err := load.SampleHostCPU(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	storm, err := load.Start(clients, load.Config{Namespace: ns, Template: vm, Updates: stormUpdates, RequestTimeout: stormRequestTimeout})
	if err != nil {
		cpu.Stop()
		t.Fatal(err)
	}
	stopped := false
	stop := func() *load.Record {
		if stopped {
			return nil
		}
		stopped = true
		rec := storm.Stop()
		var err error
		if rec.HostCPU, err = cpu.Stop(); err != nil {
			t.Errorf("the host's CPU during the storm: %v", err)
		}
		return rec
	}
	t.Cleanup(func() { stop() })
	if !waitOut(t.Context(), shape.before) {
		t.Fatal("the test ended before the fault")
	}
	at := fault()
	if !waitOut(t.Context(), shape.after) {
		t.Fatal("the test ended during the storm")
	}
	rec := stop()
	t.Logf("storm: %d requests from %d clients in %s", len(rec.Requests), rec.Clients, rec.Ended.Sub(rec.Began).Round(time.Millisecond))
	return rec, at
}

// controllerWritesTimeout bounds the wait for virt-controller to write a
// probe VM's status before a storm. After an outage of the API (a switch of
// mode is one) client-go's reflectors wait up to 30 s between failed lists,
// growing: the controller can be blind for a while after the API serves.
const controllerWritesTimeout = 2 * time.Minute

// waitControllerWrites creates a VM like the storm's in ns and waits until
// virt-controller wrote its status, then deletes it. The controller writes
// the status of every VM the storm creates, so its writes are part of the
// storm's load: a baseline taken while its informers still backed off from
// an earlier outage was that much higher than the rest of the storm (CI saw
// the HA replica kill's storm settle 30 % below a baseline taken so).
func waitControllerWrites(t *testing.T, ns string, template *virtv1.VirtualMachine) {
	t.Helper()
	ctx := t.Context()
	vms := cluster.Virt.VirtualizationV1().VirtualMachines(ns)
	probe := template.DeepCopy()
	probe.Name = "storm-probe"
	created, err := vms.Create(ctx, probe, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the probe VM: %v", err)
	}
	start := time.Now()
	err = framework.WaitFor(ctx, controllerWritesTimeout, "virt-controller writing the probe VM's status", func(ctx context.Context) (bool, error) {
		vm, err := vms.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return vm.Status.PrintableStatus != "" && vm.Status.ObservedGeneration == vm.Generation, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("virt-controller wrote the probe VM's status after %s", time.Since(start).Round(100*time.Millisecond))
	if err := vms.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the probe VM: %v", err)
	}
}

// waitOut lets a load run for d: the storm's length, not a wait for a
// condition.
func waitOut(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// stormBounds are what a fault's storm figures are held to: the writes
// lost must always be 0; the rest depends on the fault.
type stormBounds struct {
	failedShare, downtime, timeToFullCapacity report.Bound
	// failedShareArgument, if set, is why a missed failed-share target
	// does not fail the test.
	failedShareArgument string
	// timeToFullCapacityArgument, if set, is why a missed target does not
	// fail the test.
	timeToFullCapacityArgument string
}

// stormFigures checks the storm's acknowledged writes against the server
// and adds its figures to fig.
func stormFigures(t *testing.T, fig *report.Figure, ns string, rec *load.Record, fault time.Time, b stormBounds) load.Figures {
	t.Helper()
	ctx := t.Context()
	var final map[string]load.Found
	// The read waits for the API to serve again, if the fault still
	// lasts: what it holds is the question, not when.
	err := framework.WaitFor(ctx, 3*time.Minute, "the storm's VMs listed", func(ctx context.Context) (bool, error) {
		var err error
		final, err = load.Final(ctx, cluster.Virt, ns)
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	v := load.Verify(rec, final)
	f, err := load.Analyze(rec, fault, stormWarmup)
	if err != nil {
		t.Fatal(err)
	}
	ttfc := report.Seconds("time to full capacity", f.TimeToFullCapacity, b.timeToFullCapacity)
	if !f.Recovered {
		// Not back within the storm: the value is only a lower bound,
		// which no bound may pass.
		ttfc = report.Text("time to full capacity", fmt.Sprintf("not within the %s after the fault", f.TimeToFullCapacity), report.MustEqual("reached within the storm"))
	} else if b.timeToFullCapacityArgument != "" {
		ttfc = ttfc.Because(b.timeToFullCapacityArgument)
	}
	failed := report.Percent("failed share", f.FailedShare, b.failedShare)
	if !failed.Pass && b.failedShareArgument != "" {
		failed = failed.Because(b.failedShareArgument)
	}
	fig.Add(
		report.Count("requests", f.Requests, report.Measured()),
		report.Count("acknowledged writes", v.Acknowledged, report.Measured()),
		report.Count("acknowledged writes lost", len(v.Lost), report.MustBe(0)),
		failed,
		report.Seconds("downtime", f.Downtime, b.downtime),
		ttfc,
	)
	if f.Level > 0 {
		// Measured, not bound: after a virt-apiserver restart the rate
		// settled anywhere from 60 % to 131 % of the baseline in the
		// runs so far (after the etcd kills, 83 % to 142 %), the host's
		// CPU saturated throughout and its split between the components
		// unchanged; a bound set now would be a guess.
		fig.Add(report.Percent("level after the fault over the baseline", f.Level/f.Baseline, report.Measured()))
	}
	for i, l := range v.Lost {
		if i == 10 {
			fig.Note("... and %d more lost writes", len(v.Lost)-10)
			break
		}
		fig.Note("lost: %s", l)
	}
	fig.Note("Baseline %.0f successful requests/s; %d objects written, %d with an acknowledged write checked. Outcomes: %s.",
		f.Baseline, v.Objects, v.Checked, outcomes(f.Outcomes))
	fig.Note("The longest interval without a successful request began %s the fault.", relative(f.DowntimeFrom.Sub(fault)))
	fig.Note("Per second from the fault (offset:succeeded/failed): %s.", f.TimelineString())
	fig.Note("Successful requests per 5 s from the storm's start: %s.", strings.Trim(fmt.Sprint(f.Whole), "[]"))
	if c := f.HostCPUString(); c != "" {
		fig.Note("Host CPU per second from the fault (offset:busy/iowait/steal, %% of both cores): %s.", c)
	}
	if f.Level > 0 {
		fig.Note("The storm's level in its last 10 s: %.0f successful requests/s; full capacity was %.0f/s.", f.Level, f.FullCapacity)
	}
	if f.FailedAfterRecovery > 0 {
		fig.Note("%d requests failed after the first second back at full capacity.", f.FailedAfterRecovery)
	}
	return f
}

func outcomes(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// relative says d as "1.2 s after" or "0.3 s before".
func relative(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("%.1f s before", -d.Seconds())
	}
	return fmt.Sprintf("%.1f s after", d.Seconds())
}
