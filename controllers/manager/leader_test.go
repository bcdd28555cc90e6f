package manager

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// deadline bounds every wait of these tests; nothing here should take more
// than a fraction of it.
const deadline = 10 * time.Second

var errCachesDidNotSync = errors.New("caches did not sync")

// fakeController records whether its ctx was cancelled, which is the only
// way a controller that did not die itself should stop.
type fakeController struct {
	name      string
	started   chan struct{}
	cancelled chan struct{}
	// dies, if set, is what the controller returns right after it starts;
	// otherwise it runs until its ctx is done.
	dies func() error
}

func newFakeController(name string, dies func() error) *fakeController {
	return &fakeController{name: name, started: make(chan struct{}), cancelled: make(chan struct{}), dies: dies}
}

func (f *fakeController) run(ctx context.Context) error {
	close(f.started)
	if f.dies != nil {
		return f.dies()
	}
	<-ctx.Done()
	close(f.cancelled)
	return nil
}

func testContext(t *testing.T) context.Context {
	return klog.NewContext(t.Context(), ktesting.NewLogger(t, ktesting.NewConfig()))
}

func TestRunAll(t *testing.T) {
	tests := []struct {
		name string
		// dying names the controller that dies, and how; "" for none.
		dying   string
		dies    func() error
		wantErr string
		wantIs  error
	}{
		{
			name:    "a controller's error stops the others and is returned",
			dying:   "vmi",
			dies:    func() error { return errCachesDidNotSync },
			wantErr: "controller vmi: caches did not sync",
			wantIs:  errCachesDidNotSync,
		},
		{
			name:    "a controller returning nil while leading stops the others and is an error",
			dying:   "vm",
			dies:    func() error { return nil },
			wantErr: "controller vm returned while leading",
		},
		{
			name: "ctx done stops every controller without an error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			fakes := map[string]*fakeController{}
			var controllers []namedController
			for _, name := range []string{"vmi", "node", "vm"} {
				var dies func() error
				if name == tt.dying {
					dies = tt.dies
				}
				fakes[name] = newFakeController(name, dies)
				controllers = append(controllers, namedController{name: name, run: fakes[name].run})
			}

			result := make(chan error, 1)
			go func() { result <- runAll(ctx, controllers) }()
			if tt.dying == "" {
				for _, f := range fakes {
					waitClosed(t, f.started, f.name+" started")
				}
				cancel()
			}

			var err error
			select {
			case err = <-result:
			case <-time.After(deadline):
				t.Fatalf("runAll did not return within %s: a surviving controller was not cancelled", deadline)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("runAll: %v, want nil", err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("runAll: %v, want an error containing %q", err, tt.wantErr)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("runAll: %v does not wrap %v", err, tt.wantIs)
				}
			}
			// runAll returns only after every controller did, so the
			// survivors' ctx must already be done.
			for name, f := range fakes {
				if name == tt.dying {
					continue
				}
				select {
				case <-f.cancelled:
				default:
					t.Errorf("controller %s returned without its ctx being cancelled", name)
				}
			}
		})
	}
}

// TestRunWhileLeadingReleasesLeaseWhenAControllerDies runs a real leader
// elector on a Lease of a fake clientset: a leader whose controller dies must
// return the controller's error and empty the Lease's holder, so that a
// standby takes over well before the lease duration.
func TestRunWhileLeadingReleasesLeaseWhenAControllerDies(t *testing.T) {
	ctx := testContext(t)
	kube := k8sfake.NewClientset()

	die := make(chan struct{})
	leading := make(chan struct{})
	leaderResult := make(chan error, 1)
	go func() {
		leaderResult <- runWhileLeading(ctx, testElectionConfig(kube, "leader"), func(ctx context.Context) error {
			close(leading)
			select {
			case <-die:
				return errCachesDidNotSync
			case <-ctx.Done():
				return nil
			}
		})
	}()
	waitClosed(t, leading, "leader started leading")
	waitForHolder(t, ctx, kube, "leader")

	close(die)
	waitForHolder(t, ctx, kube, "")
	select {
	case err := <-leaderResult:
		if !errors.Is(err, errCachesDidNotSync) {
			t.Fatalf("runWhileLeading: %v, want the controller's error %v", err, errCachesDidNotSync)
		}
	case <-time.After(deadline):
		t.Fatalf("runWhileLeading did not return within %s after its controllers died", deadline)
	}

	standbyCtx, stopStandby := context.WithCancel(ctx)
	standbyResult := make(chan error, 1)
	go func() {
		standbyResult <- runWhileLeading(standbyCtx, testElectionConfig(kube, "standby"), func(ctx context.Context) error {
			<-ctx.Done()
			return nil
		})
	}()
	waitForHolder(t, ctx, kube, "standby")
	stopStandby()
	select {
	case err := <-standbyResult:
		if err != nil {
			t.Errorf("standby stopped by its ctx: %v, want nil", err)
		}
	case <-time.After(deadline):
		t.Fatalf("standby did not return within %s of its ctx being done", deadline)
	}
	// The standby's stop released the Lease too: ReleaseOnCancel also
	// covers SIGTERM.
	waitForHolder(t, ctx, kube, "")
}

// testElectionConfig is the election of one replica named identity. The
// lease duration is far beyond deadline, so a standby that gets the Lease
// within deadline got it released, not expired.
func testElectionConfig(kube *k8sfake.Clientset, identity string) leaderelection.LeaderElectionConfig {
	return leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "virt-system", Name: "virt-controller"},
			Client:     kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		LeaseDuration: 10 * deadline,
		RenewDeadline: deadline,
		RetryPeriod:   50 * time.Millisecond,
		Name:          "virt-controller",
	}
}

// waitForHolder waits until the Lease names holder ("" for released).
func waitForHolder(t *testing.T, ctx context.Context, kube *k8sfake.Clientset, holder string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, deadline, true, func(ctx context.Context) (bool, error) {
		lease, err := kube.CoordinationV1().Leases("virt-system").Get(ctx, "virt-controller", metav1.GetOptions{})
		if err != nil {
			return false, nil // not created yet
		}
		last = ""
		if lease.Spec.HolderIdentity != nil {
			last = *lease.Spec.HolderIdentity
		}
		return last == holder, nil
	})
	if err != nil {
		t.Fatalf("Lease holder is %q after %s, want %q", last, deadline, holder)
	}
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(deadline):
		t.Fatalf("not %s within %s", what, deadline)
	}
}
