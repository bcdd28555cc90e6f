package store

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
)

// The platform as artifacts/ deploys it.
const (
	namespace         = "virt-system"
	apiserverName     = "virt-apiserver"
	etcdName          = "virt-etcd"
	componentLabel    = "virtualization.kubevirt.io/component"
	defaultClientPort = 2379
	defaultDataDir    = "/var/lib/virt-apiserver"
)

// Mode is where the platform keeps its store.
type Mode string

const (
	// ModeEmbedded is one virt-apiserver with the etcd inside it.
	ModeEmbedded Mode = "embedded"
	// ModeHA is virt-apiserver's replicas on the etcd cluster virt-etcd.
	ModeHA Mode = "ha"
)

// cluster is the Kubernetes cluster the platform runs in.
type cluster struct {
	config *rest.Config
	kube   kubernetes.Interface
}

// apiserver is the deployed virt-apiserver: its mode follows from its
// arguments (--etcd-servers: HA), not from a file of the local cluster.
type apiserver struct {
	deployment *appsv1.Deployment
	mode       Mode
	// dataDir and clientPort are the embedded etcd's (--data-dir,
	// --embedded-etcd-client-port).
	dataDir    string
	clientPort int
}

func (c *cluster) apiserver(ctx context.Context) (*apiserver, error) {
	d, err := c.kube.AppsV1().Deployments(namespace).Get(ctx, apiserverName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the platform is not deployed (Deployment %s/%s): %w", namespace, apiserverName, err)
	}
	a := &apiserver{deployment: d, mode: ModeEmbedded, dataDir: defaultDataDir, clientPort: defaultClientPort}
	for _, arg := range d.Spec.Template.Spec.Containers[0].Args {
		name, value, _ := strings.Cut(arg, "=")
		switch name {
		case "--etcd-servers":
			a.mode = ModeHA
		case "--data-dir":
			a.dataDir = value
		case "--embedded-etcd-client-port":
			if _, err := fmt.Sscan(value, &a.clientPort); err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
		}
	}
	return a, nil
}

// readyPods lists the Ready, not deleting pods of a component.
func (c *cluster) readyPods(ctx context.Context, component string) ([]corev1.Pod, error) {
	list, err := c.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: componentLabel + "=" + component})
	if err != nil {
		return nil, err
	}
	var ready []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready = append(ready, p)
			}
		}
	}
	return ready, nil
}

// forward forwards a port of this host's loopback to port on the pod's
// loopback (where the embedded etcd listens) until stop is closed, and
// returns the local port.
func (c *cluster) forward(pod string, port int, stop <-chan struct{}) (int, error) {
	transport, upgrader, err := spdy.RoundTripperFor(c.config)
	if err != nil {
		return 0, err
	}
	url := c.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return 0, fmt.Errorf("port-forward to %s:%d: %w", pod, port, err)
	case <-time.After(30 * time.Second):
		return 0, fmt.Errorf("port-forward to %s:%d not ready after 30s", pod, port)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		return 0, fmt.Errorf("port-forward to %s:%d: no local port (%v)", pod, port, err)
	}
	return int(ports[0].Local), nil
}

// exec runs command in the pod's first container with stdin, and returns
// its output; a non-zero exit is an error with its stderr.
func (c *cluster) exec(ctx context.Context, pod string, command []string, stdin io.Reader) (string, error) {
	return c.execIn(ctx, pod, "", command, stdin)
}

// execIn is exec in a named container (an init container while it runs).
func (c *cluster) execIn(ctx context.Context, pod, container string, command []string, stdin io.Reader) (string, error) {
	req := c.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(c.config, http.MethodPost, req.URL())
	if err != nil {
		return "", err
	}
	var stdout, stderr strings.Builder
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return stdout.String(), fmt.Errorf("%s in pod %s: %w: %s", strings.Join(command, " "), pod, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// scale sets the Deployment's replicas and waits until it has that many
// ready pods and no other (0: until every pod is gone).
func (c *cluster) scale(ctx context.Context, name string, replicas int32, timeout time.Duration) error {
	s, err := c.kube.AppsV1().Deployments(namespace).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Spec.Replicas = replicas
	if _, err := c.kube.AppsV1().Deployments(namespace).UpdateScale(ctx, name, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale deployment %s to %d: %w", name, replicas, err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: componentLabel + "=" + name})
		if err != nil {
			return false, nil
		}
		if replicas == 0 {
			return len(pods.Items) == 0, nil
		}
		ready, err := c.readyPods(ctx, name)
		return err == nil && len(ready) == int(replicas) && len(pods.Items) == int(replicas), nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s: not %d ready pods after %s: %w", name, replicas, timeout, err)
	}
	return nil
}

// ensureNamespace creates a namespace Kubernetes does not have: a
// restored object's, in a cluster rebuilt from nothing.
func (c *cluster) ensureNamespace(ctx context.Context, name string) (bool, error) {
	_, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	return err == nil, err
}
