package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestStatusOwnership: virt-apiserver holds the components' real
// credentials (tokens of virt-handler's service account bound to its pod,
// so naming its node, and of virt-controller's), through the kube-apiserver
// and the aggregator, to their rows of internal/ownership
// (docs/ownership.md). Every write is a server-side dry run: it passes
// admission and changes nothing.
func TestStatusOwnership(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	handler := handlerPod(t)
	node := handler.Spec.NodeName
	asHandler := virtAs(t, "virt-handler", &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: handler.Name, UID: handler.UID})
	asController := virtAs(t, "virt-controller", nil)

	raw, err := os.ReadFile(filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vmiNamed := func(name string, nodeSelector map[string]string) {
		vmi := &virtv1.VirtualMachineInstance{}
		if err := yaml.Unmarshal(raw, vmi); err != nil {
			t.Fatal(err)
		}
		vmi.Name, vmi.Labels, vmi.Spec.NodeSelector = name, nil, nodeSelector
		if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// One VMI that no node takes (it stays Scheduling), one that runs.
	vmiNamed("unplaceable", map[string]string{"e2e.example.org/no-such-node": "x"})
	vmiNamed("running", nil)
	if _, err := cluster.WaitVMI(ctx, ns, "unplaceable", framework.BootTimeout, "Scheduling", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.Phase == virtv1.Scheduling, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.WaitVMIRunning(ctx, ns, "running"); err != nil {
		t.Fatal(err)
	}

	// dryRun writes the VMI's status as c after change, re-reading it when
	// its own writers changed it in between.
	dryRun := func(c virtclient.Interface, name string, change func(*virtv1.VirtualMachineInstanceStatus)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(&vmi.Status)
			_, err = c.VirtualizationV1().VirtualMachineInstances(ns).UpdateStatus(ctx, vmi, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
	}
	now := metav1.Now()
	handOff := func(s *virtv1.VirtualMachineInstanceStatus) {
		s.SetPhase(virtv1.Scheduled, "", now)
		s.NodeName = node
	}
	pause := func(s *virtv1.VirtualMachineInstanceStatus) {
		s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue, Reason: "Paused"}, now)
	}
	tests := []struct {
		name    string
		c       virtclient.Interface
		vmi     string
		change  func(*virtv1.VirtualMachineInstanceStatus)
		refused string // the field the refusal names; "": allowed
	}{
		{"the handler hands a Scheduling VMI to its node", asHandler, "unplaceable", handOff, "status.nodeName"},
		// The same refusal names each field (a Scheduled VMI without a
		// node would be invalid before admission is asked).
		{"the handler's hand-off names phase Scheduled", asHandler, "unplaceable", handOff, "status.phase"},
		{"the controller hands it off", asController, "unplaceable", handOff, ""},
		{"the handler reports its guest paused", asHandler, "running", pause, ""},
		{"the controller reports the guest paused", asController, "running", pause, "status.conditions[Paused]"},
		{"the handler drops the launcher pod", asHandler, "running", func(s *virtv1.VirtualMachineInstanceStatus) { s.ActivePods = nil }, "status.activePods"},
		{"the handler fails its guest for node health's reason", asHandler, "running", func(s *virtv1.VirtualMachineInstanceStatus) {
			s.Fail(virtv1.ReasonNodeUnresponsive, "e2e", now)
		}, "status.reason"},
		{"node health fails it", asController, "running", func(s *virtv1.VirtualMachineInstanceStatus) {
			s.Fail(virtv1.ReasonNodeUnresponsive, "e2e", now)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := dryRun(tc.c, tc.vmi, tc.change)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refused != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.refused+":")):
				t.Errorf("err = %v, want 403 naming %s", err, tc.refused)
			}
		})
	}
	// The dry runs changed nothing: still Scheduling and Running.
	for name, phase := range map[string]virtv1.VirtualMachineInstancePhase{"unplaceable": virtv1.Scheduling, "running": virtv1.Running} {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || vmi.Status.Phase != phase {
			t.Errorf("VMI %s after the dry runs: %v (%v), want %s", name, vmi.Status.Phase, err, phase)
		}
	}
}

// virtAs is a virt client with a fresh token of the platform's service
// account sa, bound to ref (nil: to nothing), going through the
// kube-apiserver like the component's own.
func virtAs(t *testing.T, sa string, ref *authenticationv1.BoundObjectReference) virtclient.Interface {
	t.Helper()
	tr, err := cluster.Kube.CoreV1().ServiceAccounts("virt-system").CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600), BoundObjectRef: ref},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := virtclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
