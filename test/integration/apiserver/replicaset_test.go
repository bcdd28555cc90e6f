package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/record"
	kubectlscale "k8s.io/kubectl/pkg/cmd/scale"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/testserver"
	"kubevirt.dev/virt/controllers/replicaset"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/generated/informers/externalversions"
)

// replicaSetFor is a replica set of n test guests labelled app=name.
func replicaSetFor(name string, n int32) *virtv1.VirtualMachineInstanceReplicaSet {
	return &virtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: virtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(n),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       tinyVMI("").Spec,
			},
		},
	}
}

// kubectl runs kubectl's own command tree for args against the server, in
// process, and returns what it printed; a kubectl failure is an error.
func kubectl(t *testing.T, s *testserver.Server, args ...string) (string, error) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: test, user: {}}]
contexts: [{name: test, context: {cluster: test, user: test, namespace: %s}}]
current-context: test
`, s.ClientConfig.Host, ns)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.CacheDir = ptr.To(t.TempDir())
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := &cobra.Command{Use: "kubectl"}
	root.AddCommand(kubectlscale.NewCmdScale(cmdutil.NewFactory(flags), streams))
	root.SetArgs(args)
	// kubectl ends the process on an error; here it ends the command.
	var fatal error
	cmdutil.BehaviorOnFatal(func(msg string, code int) { fatal = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(msg)) })
	defer cmdutil.DefaultBehaviorOnFatal()
	if err := root.Execute(); err != nil {
		return out.String(), err
	}
	if fatal != nil {
		return out.String(), fmt.Errorf("%w (stderr: %s)", fatal, errOut.String())
	}
	return out.String(), nil
}

// TestReplicaSetAPI: the resource, its status and its scale subresource
// as clients see them, without a controller.
func TestReplicaSetAPI(t *testing.T) {
	s, client := start(t)
	ctx := t.Context()
	sets := client.VirtualizationV1().VirtualMachineInstanceReplicaSets(ns)

	t.Run("discovery advertises the short name and an autoscaling/v1 scale", func(t *testing.T) {
		list, err := client.Discovery().ServerResourcesForGroupVersion(virtv1.SchemeGroupVersion.String())
		if err != nil {
			t.Fatal(err)
		}
		var main, scale *metav1.APIResource
		for i, r := range list.APIResources {
			switch r.Name {
			case "virtualmachineinstancereplicasets":
				main = &list.APIResources[i]
			case "virtualmachineinstancereplicasets/scale":
				scale = &list.APIResources[i]
			}
		}
		if main == nil || !slices.Contains(main.ShortNames, "vmirs") || main.Kind != "VirtualMachineInstanceReplicaSet" || !main.Namespaced {
			t.Errorf("main resource = %+v", main)
		}
		if scale == nil || scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" ||
			!slices.Contains(scale.Verbs, "patch") || !slices.Contains(scale.Verbs, "update") {
			t.Errorf("scale subresource = %+v, want autoscaling/v1 Scale with get, update, patch", scale)
		}
	})

	t.Run("OpenAPI describes the Scale", func(t *testing.T) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/openapi/v3/apis/virtualization.kubevirt.io/v1").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"io.k8s.api.autoscaling.v1.Scale", "virtualmachineinstancereplicasets/{name}/scale"} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("OpenAPI v3 of the group does not mention %s", want)
			}
		}
	})

	t.Run("invalid replica sets are refused with field paths", func(t *testing.T) {
		tests := []struct {
			name   string
			mutate func(*virtv1.VirtualMachineInstanceReplicaSet)
			path   string
		}{
			{"no selector", func(rs *virtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Selector = nil }, "spec.selector"},
			{"selector misses the template", func(rs *virtv1.VirtualMachineInstanceReplicaSet) {
				rs.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
			}, "spec.template.metadata.labels"},
			{"negative replicas", func(rs *virtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr.To(int32(-2)) }, "spec.replicas"},
			{"template not a valid VMI", func(rs *virtv1.VirtualMachineInstanceReplicaSet) {
				rs.Spec.Template.Spec.Domain.CPU = &virtv1.CPU{Cores: 300}
			}, "spec.template.spec.domain.cpu.cores"},
			{"no template", func(rs *virtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Template = nil }, "spec.template"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				rs := replicaSetFor("bad", 1)
				tc.mutate(rs)
				_, err := sets.Create(ctx, rs, metav1.CreateOptions{})
				if !apierrors.IsInvalid(err) {
					t.Fatalf("err = %v, want 422", err)
				}
				var paths []string
				for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
					paths = append(paths, c.Field)
				}
				if !slices.Contains(paths, tc.path) {
					t.Errorf("causes at %v, want one at %s", paths, tc.path)
				}
			})
		}
	})

	t.Run("the example is accepted as it is", func(t *testing.T) {
		data, err := os.ReadFile("../../../artifacts/examples/vmi-replicaset-tiny.yaml")
		if err != nil {
			t.Fatal(err)
		}
		scheme := runtime.NewScheme()
		install.Install(scheme)
		obj, err := runtime.Decode(serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(virtv1.SchemeGroupVersion), data)
		if err != nil {
			t.Fatal(err)
		}
		example := obj.(*virtv1.VirtualMachineInstanceReplicaSet)
		example.Namespace = ns
		if _, err := sets.Create(ctx, example, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create the example: %v", err)
		}
	})

	rs := replicaSetFor("web", 2)
	rs.Spec.Replicas = nil
	created, err := sets.Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Replicas == nil || *created.Spec.Replicas != 1 {
		t.Errorf("spec.replicas = %v, want the default 1", created.Spec.Replicas)
	}
	if _, err := sets.Update(ctx, withSelector(created, "app=other"), metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing the selector: err = %v, want 422", err)
	}

	t.Run("scale through the generated client", func(t *testing.T) {
		scale, err := sets.GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != 1 || scale.Status.Selector != "app=web" || scale.UID != created.UID {
			t.Errorf("scale = %+v", scale)
		}
		scale.Spec.Replicas = 2
		if scale, err = sets.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil || scale.Spec.Replicas != 2 {
			t.Fatalf("update scale: %v, %+v", err, scale)
		}
		scale.Spec.Replicas = -1
		if _, err := sets.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("negative scale: err = %v, want 422", err)
		}
		stale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: created.ResourceVersion}, Spec: autoscalingv1.ScaleSpec{Replicas: 9}}
		if _, err := sets.UpdateScale(ctx, "web", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("scale with a stale resourceVersion: err = %v, want 409", err)
		}
	})

	t.Run("scale with a JSON merge patch, as the HorizontalPodAutoscaler and kubectl do", func(t *testing.T) {
		body, err := client.VirtualizationV1().RESTClient().Patch(types.MergePatchType).
			Namespace(ns).Resource("virtualmachineinstancereplicasets").Name("web").SubResource("scale").
			SetHeader("Accept", "application/json").Body([]byte(`{"spec":{"replicas":4}}`)).DoRaw(ctx)
		if err != nil {
			t.Fatalf("patch /scale: %v: %s", err, body)
		}
		if !bytes.Contains(body, []byte(`"kind":"Scale"`)) || !bytes.Contains(body, []byte(`"apiVersion":"autoscaling/v1"`)) {
			t.Errorf("patch answered %s, want an autoscaling/v1 Scale", body)
		}
		if got, _ := sets.Get(ctx, "web", metav1.GetOptions{}); got == nil || *got.Spec.Replicas != 4 {
			t.Errorf("spec.replicas after the patch = %v, want 4", got)
		}
	})

	t.Run("scale with the other patch types", func(t *testing.T) {
		for _, p := range []struct {
			typ  types.PatchType
			body string
			want int32
		}{
			{types.StrategicMergePatchType, `{"spec":{"replicas":5}}`, 5},
			{types.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":6}]`, 6},
			{types.ApplyPatchType, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":4}}`, 4},
		} {
			req := client.VirtualizationV1().RESTClient().Patch(p.typ).
				Namespace(ns).Resource("virtualmachineinstancereplicasets").Name("web").SubResource("scale").Body([]byte(p.body))
			if p.typ == types.ApplyPatchType {
				req = req.Param("fieldManager", "test").Param("force", "true")
			}
			if body, err := req.DoRaw(ctx); err != nil {
				t.Errorf("%s patch of /scale: %v: %s", p.typ, err, body)
				continue
			}
			if got, _ := sets.Get(ctx, "web", metav1.GetOptions{}); got == nil || *got.Spec.Replicas != p.want {
				t.Errorf("spec.replicas after the %s patch = %v, want %d", p.typ, got.Spec.Replicas, p.want)
			}
		}
	})

	t.Run("kubectl scale", func(t *testing.T) {
		out, err := kubectl(t, s, "scale", "vmirs", "web", "--replicas=3")
		if err != nil {
			t.Fatalf("kubectl scale: %v (%s)", err, out)
		}
		if !strings.Contains(out, "scaled") {
			t.Errorf("kubectl printed %q", out)
		}
		got, err := sets.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *got.Spec.Replicas != 3 {
			t.Fatalf("spec.replicas after kubectl scale = %v (%v), want 3", got.Spec.Replicas, err)
		}
		// The field manager credits kubectl with spec.replicas of the replica set.
		var credited bool
		for _, m := range got.ManagedFields {
			credited = credited || (m.Subresource == "scale" && m.FieldsV1 != nil && bytes.Contains(m.FieldsV1.Raw, []byte("f:replicas")))
		}
		if !credited {
			t.Errorf("no managed fields entry of the scale subresource owns spec.replicas: %+v", got.ManagedFields)
		}
		if _, err := kubectl(t, s, "scale", "vmirs", "web", "--current-replicas=7", "--replicas=5"); err == nil {
			t.Error("kubectl scale with a wrong --current-replicas succeeded")
		}
	})

	t.Run("status is written only through /status", func(t *testing.T) {
		got, err := sets.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status.Replicas, got.Status.ReadyReplicas = 3, 5
		if _, err := sets.UpdateStatus(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("more ready than existing: err = %v, want 422", err)
		}
		got.Status.ReadyReplicas = 2
		if _, err := sets.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if again, _ := sets.Get(ctx, "web", metav1.GetOptions{}); again.Status.Replicas != 0 {
			t.Errorf("the main resource wrote status.replicas = %d", again.Status.Replicas)
		}
	})
}

func withSelector(rs *virtv1.VirtualMachineInstanceReplicaSet, label string) *virtv1.VirtualMachineInstanceReplicaSet {
	out := rs.DeepCopy()
	k, v, _ := strings.Cut(label, "=")
	out.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	out.Spec.Template.ObjectMeta.Labels = map[string]string{k: v}
	return out
}

// runReplicaSetController runs virt-controller's replica set controller
// against the server until the test ends.
func runReplicaSetController(t *testing.T, client virtclient.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := externalversions.NewSharedInformerFactory(client, 0)
	ctrl, err := replicaset.New(ctx, client, factory.Virtualization().V1().VirtualMachineInstanceReplicaSets(),
		factory.Virtualization().V1().VirtualMachineInstances(), &record.FakeRecorder{}, replicaset.DefaultBurst, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
		factory.Shutdown()
	})
}

// instancesOf lists the VMIs rs controls, split into active ones and ones
// being deleted.
func instancesOf(ctx context.Context, client virtclient.Interface, rs *virtv1.VirtualMachineInstanceReplicaSet) (active, deleting []virtv1.VirtualMachineInstance, err error) {
	list, err := client.VirtualizationV1().VirtualMachineInstances(rs.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + rs.Name})
	if err != nil {
		return nil, nil, err
	}
	for _, vmi := range list.Items {
		if ref := metav1.GetControllerOf(&vmi); ref == nil || ref.UID != rs.UID {
			continue
		}
		if vmi.DeletionTimestamp != nil {
			deleting = append(deleting, vmi)
		} else if !vmi.Status.Phase.IsFinal() {
			active = append(active, vmi)
		}
	}
	return active, deleting, nil
}

// waitReplicas waits until rs has n active instances and says so in its
// status (and readyReplicas ready), returning the active instances.
func waitReplicas(t *testing.T, client virtclient.Interface, rs *virtv1.VirtualMachineInstanceReplicaSet, n, ready int32) []virtv1.VirtualMachineInstance {
	t.Helper()
	var active []virtv1.VirtualMachineInstance
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if active, _, err = instancesOf(ctx, client, rs); err != nil {
			return false, err
		}
		got, err := client.VirtualizationV1().VirtualMachineInstanceReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("%d active instances, status %+v", len(active), got.Status)
		return len(active) == int(n) && got.Status.Replicas == n && got.Status.ReadyReplicas == ready, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d replicas (%d ready) of %s: %v; last: %s", n, ready, rs.Name, err, last)
	}
	return active
}

// TestReplicaSetControllerKeepsReplicas runs the replica set controller
// against a real server: it creates the instances, follows the scale
// subresource up and down, and replaces an instance that is deleted or
// fails. Nothing runs guests here, so a deleted instance stays Terminating
// (its finalizers are the node's and the VMI controller's to remove) while
// its replacement is created.
func TestReplicaSetControllerKeepsReplicas(t *testing.T) {
	s, client := start(t)
	ctx := t.Context()
	runReplicaSetController(t, client)
	sets := client.VirtualizationV1().VirtualMachineInstanceReplicaSets(ns)
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	rs, err := sets.Create(ctx, replicaSetFor("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	active := waitReplicas(t, client, rs, 2, 0)
	for _, vmi := range active {
		if !strings.HasPrefix(vmi.Name, "web-") || vmi.Spec.Domain.Firmware.KernelBoot == nil {
			t.Errorf("instance %s is not named after the replica set or not from its template", vmi.Name)
		}
	}
	if got, _ := sets.Get(ctx, "web", metav1.GetOptions{}); got.Status.LabelSelector != "app=web" {
		t.Errorf("status.labelSelector = %q, want app=web", got.Status.LabelSelector)
	}

	// A guest that came up counts as ready.
	vmi := active[0].DeepCopy()
	vmi.Status.SetPhase(virtv1.Scheduled, "", metav1.Now())
	vmi.Status.NodeName = "node-a"
	if vmi, err = vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi.Status.SetPhase(virtv1.Running, "", metav1.Now())
	vmi.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, metav1.Now())
	if _, err = vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, client, rs, 2, 1)

	// Up through the scale subresource.
	scale, err := sets.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 4
	if _, err := sets.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, client, rs, 4, 1)

	// Down with kubectl: the surplus is deleted, the ready guest kept.
	if out, err := kubectl(t, s, "scale", "vmirs", "web", "--replicas=1"); err != nil {
		t.Fatalf("kubectl scale: %v (%s)", err, out)
	}
	active = waitReplicas(t, client, rs, 1, 1)
	if active[0].Name != vmi.Name {
		t.Errorf("scale-down kept %s, want the ready %s", active[0].Name, vmi.Name)
	}
	if _, deleting, _ := instancesOf(ctx, client, rs); len(deleting) != 3 {
		t.Errorf("%d instances being deleted, want the 3 surplus (Terminating until their nodes shut them down)", len(deleting))
	}

	// A deleted instance is replaced.
	if err := vmis.Delete(ctx, vmi.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	active = waitReplicas(t, client, rs, 1, 0)
	if active[0].Name == vmi.Name {
		t.Fatalf("the deleted instance %s still counts", vmi.Name)
	}

	// A failed instance is replaced, and deleted.
	failed := active[0].DeepCopy()
	failed.Status.Fail("Crashed", "the guest crashed", metav1.Now())
	if _, err := vmis.UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	active = waitReplicas(t, client, rs, 1, 0)
	if active[0].Name == failed.Name {
		t.Fatalf("the failed instance %s still counts", failed.Name)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := vmis.Get(ctx, failed.Name, metav1.GetOptions{})
		return err == nil && got.DeletionTimestamp != nil, err
	})
	if err != nil {
		t.Errorf("the failed instance was not deleted: %v", err)
	}

	// An orphan that matches is adopted instead of creating more; paused,
	// nothing is created or deleted.
	if _, err := sets.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"paused":true,"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := sets.Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaPaused) != nil, err
	})
	if err != nil {
		t.Fatalf("no ReplicaPaused condition: %v", err)
	}
	loose := tinyVMI("loose")
	loose.Labels = map[string]string{"app": "web"}
	if _, err := vmis.Create(ctx, loose, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sets.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"paused":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	active = waitReplicas(t, client, rs, 2, 0)
	if !slices.ContainsFunc(active, func(v virtv1.VirtualMachineInstance) bool { return v.Name == "loose" }) {
		t.Errorf("active instances %v do not include the adopted orphan", names(active))
	}
}

func names(vmis []virtv1.VirtualMachineInstance) []string {
	var out []string
	for _, v := range vmis {
		out = append(out, v.Name)
	}
	return out
}
