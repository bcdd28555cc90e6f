package guestaccess

import (
	"context"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Resolver finds the guest-access address (host:port) of the virt-handler
// on a node. Its errors are the API's (503 when there is no handler to
// reach).
type Resolver interface {
	Resolve(node string) (string, error)
}

// StaticResolver maps node names to handler addresses, for tests and
// --standalone servers, which have no handler pods to watch.
type StaticResolver map[string]string

// Resolve returns the address of node's handler.
func (r StaticResolver) Resolve(node string) (string, error) {
	addr, ok := r[node]
	if !ok {
		return "", noHandler(node, "")
	}
	return addr, nil
}

// nodeNameIndex indexes handler pods by spec.nodeName.
const nodeNameIndex = "spec.nodeName"

// PodResolver finds handlers among the pods of one namespace that match a
// label selector, through an informer restricted to them (the RBAC of
// virt-apiserver covers only that namespace).
type PodResolver struct {
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	portName string
	where    string
}

// NewPodResolver watches the pods of namespace matching selector through
// client; a handler's address is its pod IP and the container port named
// portName. Start it before use.
func NewPodResolver(client kubernetes.Interface, namespace, selector, portName string) (*PodResolver, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	informer := factory.Core().V1().Pods().Informer()
	err := informer.AddIndexers(cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return nil, nil
		}
		return []string{pod.Spec.NodeName}, nil
	}})
	if err != nil {
		return nil, fmt.Errorf("index virt-handler pods: %w", err)
	}
	return &PodResolver{
		factory:  factory,
		informer: informer,
		portName: portName,
		where:    fmt.Sprintf("namespace %s, selector %s", namespace, selector),
	}, nil
}

// Start runs the informer until ctx ends.
func (r *PodResolver) Start(ctx context.Context) {
	r.factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		r.factory.Shutdown()
	}()
}

// Resolve returns the address of the newest ready handler pod on node.
func (r *PodResolver) Resolve(node string) (string, error) {
	if !r.informer.HasSynced() {
		return "", apierrors.NewServiceUnavailable("virt-apiserver has not listed the virt-handler pods yet; try again")
	}
	objs, err := r.informer.GetIndexer().ByIndex(nodeNameIndex, node)
	if err != nil {
		return "", apierrors.NewInternalError(fmt.Errorf("virt-handler pods of node %s: %w", node, err))
	}
	var best *corev1.Pod
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if !ready(pod) {
			continue
		}
		// During a rollout the old and the new handler may both be
		// ready for a moment: the new one stays.
		if best == nil || best.CreationTimestamp.Before(&pod.CreationTimestamp) {
			best = pod
		}
	}
	if best == nil {
		return "", noHandler(node, r.where)
	}
	port, ok := containerPort(best, r.portName)
	if !ok {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("virt-handler pod %s on node %s has no container port named %q", best.Name, node, r.portName))
	}
	return net.JoinHostPort(best.Status.PodIP, strconv.Itoa(int(port))), nil
}

// ready reports whether pod is a handler that answers: running, Ready,
// with an IP, not being deleted.
func ready(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containerPort(pod *corev1.Pod, name string) (int32, bool) {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

func noHandler(node, where string) error {
	msg := fmt.Sprintf("no ready virt-handler on node %s", node)
	if where != "" {
		msg += " (" + where + ")"
	}
	return apierrors.NewServiceUnavailable(msg)
}
