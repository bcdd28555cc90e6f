package console_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/fake"
	"kubevirt.dev/virt/virtctl/console"
)

func vmi(name string, phase virtv1.VirtualMachineInstancePhase) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "7"},
		Status:     virtv1.VirtualMachineInstanceStatus{Phase: phase},
	}
}

// watched is a fake clientset whose VMI watches are handed to the test.
func watched(objs ...runtime.Object) (*fake.Clientset, chan *watch.FakeWatcher) {
	c := fake.NewClientset(objs...)
	watches := make(chan *watch.FakeWatcher, 4)
	c.PrependWatchReactor("virtualmachineinstances", func(clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(8, false)
		watches <- w
		return true, w, nil
	})
	return c, watches
}

func TestWaitRunning(t *testing.T) {
	type step struct {
		typ watch.EventType
		obj *virtv1.VirtualMachineInstance
	}
	for _, tc := range []struct {
		name     string
		initial  virtv1.VirtualMachineInstancePhase
		events   []step
		want     string // "" is success
		progress []virtv1.VirtualMachineInstancePhase
	}{
		{name: "already running", initial: virtv1.Running},
		{name: "runs after scheduling", initial: virtv1.Pending, events: []step{
			{watch.Modified, vmi("vmi-tiny", virtv1.Scheduling)},
			{watch.Modified, vmi("other", virtv1.Failed)}, // another VMI: not ours
			{watch.Modified, vmi("vmi-tiny", virtv1.Scheduling)},
			{watch.Modified, vmi("vmi-tiny", virtv1.Scheduled)},
			{watch.Modified, vmi("vmi-tiny", virtv1.Running)},
		}, progress: []virtv1.VirtualMachineInstancePhase{virtv1.Pending, virtv1.Scheduling, virtv1.Scheduled}},
		{name: "already ended", initial: virtv1.Succeeded, want: "VMI vmi-tiny has ended (phase Succeeded): it has no console any more"},
		{name: "fails while waiting", initial: virtv1.Scheduled, events: []step{
			{watch.Modified, vmi("vmi-tiny", virtv1.Failed)},
		}, want: "VMI vmi-tiny has ended (phase Failed)", progress: []virtv1.VirtualMachineInstancePhase{virtv1.Scheduled}},
		{name: "deleted while waiting", initial: virtv1.Scheduling, events: []step{
			{watch.Deleted, vmi("vmi-tiny", virtv1.Scheduling)},
		}, want: "VMI vmi-tiny was deleted while waiting for it to run", progress: []virtv1.VirtualMachineInstancePhase{virtv1.Scheduling}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, watches := watched(vmi("vmi-tiny", tc.initial))
			go func() {
				if len(tc.events) == 0 {
					return
				}
				w := <-watches
				for _, ev := range tc.events {
					w.Action(ev.typ, ev.obj)
				}
			}()
			var seen []virtv1.VirtualMachineInstancePhase
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := console.WaitRunning(ctx, c, "default", "vmi-tiny", func(p virtv1.VirtualMachineInstancePhase) { seen = append(seen, p) })
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("WaitRunning: %v, want success", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("WaitRunning: %v, want %q", err, tc.want)
			}
			if tc.progress != nil && !slices.Equal(seen, tc.progress) {
				t.Errorf("progress %v, want %v", seen, tc.progress)
			}
		})
	}
}

func TestWaitRunningRereadsWhenTheWatchEnds(t *testing.T) {
	c, watches := watched(vmi("vmi-tiny", virtv1.Scheduling))
	go func() {
		w := <-watches
		// The VMI moves on while the server ends the watch (the fake's
		// update reaches no watch): only a fresh read sees it.
		_, _ = c.VirtualizationV1().VirtualMachineInstances("default").Update(context.Background(), vmi("vmi-tiny", virtv1.Running), metav1.UpdateOptions{})
		w.Stop()
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := console.WaitRunning(ctx, c, "default", "vmi-tiny", nil); err != nil {
		t.Errorf("WaitRunning: %v", err)
	}
}

func TestWaitRunningGivesUpWithThePhase(t *testing.T) {
	c, _ := watched(vmi("vmi-tiny", virtv1.Scheduled))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := console.WaitRunning(ctx, c, "default", "vmi-tiny", nil)
	var nr *console.NotRunningError
	if !errors.As(err, &nr) || nr.Phase != virtv1.Scheduled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRunning: %#v, want a NotRunningError in phase Scheduled after the deadline", err)
	}
	if want := "VMI vmi-tiny is not Running yet (phase Scheduled): gave up waiting"; err.Error() != want {
		t.Errorf("WaitRunning: %q, want %q", err, want)
	}
}

func TestWaitRunningNotFound(t *testing.T) {
	c, _ := watched()
	err := console.WaitRunning(t.Context(), c, "default", "vmi-tiny", nil)
	if !apierrors.IsNotFound(err) {
		t.Errorf("WaitRunning: %v, want the API's NotFound", err)
	}
}
