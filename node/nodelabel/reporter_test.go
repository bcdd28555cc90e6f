package nodelabel

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"kubevirt.dev/virt/internal/capability"
)

// TestReporter: the node's facts become the Node's capability labels,
// other labels stay, and the same facts again write nothing.
func TestReporter(t *testing.T) {
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"keep": "me"}}})
	r := New(kube, "n1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	labelled := func(key, want string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
			n, err := kube.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			return err == nil && n.Labels[key] == want && n.Labels["keep"] == "me", err
		})
		if err != nil {
			t.Fatalf("label %s never became %q: %v", key, want, err)
		}
	}
	r.Observe(capability.Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"})
	labelled(capability.Prefix+"capability-kvm", "false")
	labelled(capability.HypervisorVersionLabel, "7.2.22")

	patches := func() int {
		n := 0
		for _, a := range kube.Actions() {
			if _, ok := a.(k8stesting.PatchAction); ok {
				n++
			}
		}
		return n
	}
	before := patches()
	r.Observe(capability.Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"})
	r.Observe(capability.Facts{LibvirtVersion: "10.0.0", HypervisorVersion: "8.2.0", DomainType: "kvm"})
	labelled(capability.Prefix+"capability-kvm", "true")
	labelled(capability.Prefix+"capability-nic-igb", "true")
	if got := patches() - before; got != 1 {
		t.Errorf("%d patches for one change of facts, want 1", got)
	}
}
