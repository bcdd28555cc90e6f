package density

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/proc"
	"kubevirt.dev/virt/bench/startup"
)

// Namespace holds the part's VMIs.
const Namespace = "bench-density"

// Options bound the part.
type Options struct {
	// VMIs is how many to start at once when they fit.
	VMIs int
	// Timeout bounds one batch, start to the last marker.
	Timeout time.Duration
	Guest   startup.Guest
}

// Result is what the part measured.
type Result struct {
	// Asked is Options.VMIs; Fit.Count were started.
	Asked int
	Fit   Fit
	// Rows are the platform's batch and raw libvirt's, in that order.
	Rows  []startup.Row
	Notes []string
}

// Run finds how many launcher pods fit, starts that many VMIs on the
// platform, deletes them, and starts as many domains under raw libvirt.
// Its VMIs are deleted whatever happens.
func Run(ctx context.Context, env startup.Env, o Options) (res *Result, err error) {
	res = &Result{Asked: o.VMIs}
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		err = errors.Join(err,
			startup.DeleteAll(cleanup, env, Namespace, 10*time.Minute),
			namespace.Delete(cleanup, env.Kube, 2*time.Minute, Namespace))
	}()
	if res.Fit, err = measureFit(ctx, env, o.VMIs); err != nil {
		return res, err
	}
	env.Logf("density: %s", res.Fit.describe())
	if res.Fit.Count == 0 {
		return res, fmt.Errorf("no launcher pod fits: %s", res.Fit.describe())
	}
	raw, err := startup.OpenRaw(ctx, o.Guest, o.Timeout, env.Logf)
	if err != nil {
		return res, err
	}
	defer raw.Close()
	n := res.Fit.Count
	env.Logf("density: platform, %d VMIs at once", n)
	r, err := startup.PlatformBatch(ctx, env, Namespace, n, o.Timeout)
	if err != nil {
		return res, err
	}
	res.Rows = append(res.Rows, r)
	logRow(env, r)
	if err := startup.DeleteAll(ctx, env, Namespace, 10*time.Minute); err != nil {
		return res, err
	}
	env.Logf("density: raw libvirt, %d domains at once", n)
	if r, err = raw.Batch(ctx, n, o.Timeout, env.Logf); err != nil {
		return res, err
	}
	res.Rows = append(res.Rows, r)
	logRow(env, r)
	return res, ctx.Err()
}

func logRow(env startup.Env, r startup.Row) {
	env.Logf("density: %s, %d: Running p50 %s p95 %s max %s; marker p50 %s p95 %s max %s; %d failed; %d MiB per guest",
		r.Path, r.Count, r.RunningP50.Round(time.Millisecond), r.RunningP95.Round(time.Millisecond), r.RunningMax.Round(time.Millisecond),
		r.MarkerP50.Round(time.Millisecond), r.MarkerP95.Round(time.Millisecond), r.MarkerMax.Round(time.Millisecond), r.Failed,
		r.NodeMemory/int64(max(r.Count, 1))/proc.MiB)
}

// measureFit creates one VMI, reads its launcher pod's requests and the
// room on the pod's node, and deletes it again.
func measureFit(ctx context.Context, env startup.Env, asked int) (Fit, error) {
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace)
	probe, err := vmis.Create(ctx, startup.VMI("density-probe"), metav1.CreateOptions{})
	if err != nil {
		return Fit{}, fmt.Errorf("create the probe VMI: %w", err)
	}
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: virtv1.CreatedByLabel + "=" + string(probe.UID)})
		if err != nil || len(pods.Items) != 1 || pods.Items[0].Spec.NodeName == "" {
			return false, nil
		}
		pod = &pods.Items[0]
		return true, nil
	})
	if err != nil {
		return Fit{}, fmt.Errorf("the probe VMI's launcher pod bound to a node: %w", err)
	}
	node, err := env.Kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return Fit{}, err
	}
	onNode, err := env.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node.Name).String()})
	if err != nil {
		return Fit{}, err
	}
	var others []corev1.Pod
	for _, p := range onNode.Items {
		if p.UID != pod.UID {
			others = append(others, p)
		}
	}
	per := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	free := freeOn(node, others)
	f := Fit{Node: node.Name, PodRequests: asStrings(per), Allocatable: asStrings(node.Status.Allocatable), Free: asStrings(free)}
	f.Count, f.LimitedBy = fits(asked, per, free)
	return f, startup.DeleteAll(ctx, env, Namespace, 5*time.Minute)
}
