package apiclient

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// Options are a component's flags for its clients of both API servers.
type Options struct {
	// Kubeconfig is empty in a pod: the in-cluster configuration, whose
	// bound service-account token also names the pod's node to
	// virt-apiserver's node restriction.
	Kubeconfig string
	// VirtAPIServerHost, when set, reaches virt-apiserver directly (e.g. its
	// Service) instead of through the kube-apiserver's aggregator.
	VirtAPIServerHost string
	// VirtAPIServerCAFile verifies VirtAPIServerHost's serving certificate.
	VirtAPIServerCAFile string
	// ContentType of requests to both API servers.
	ContentType string
	QPS         float32
	Burst       int
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"kubeconfig of the kube-apiserver; empty in a pod (in-cluster: the pod's bound token, which names its node)")
	fs.StringVar(&o.VirtAPIServerHost, "virt-apiserver-host", o.VirtAPIServerHost,
		"URL of virt-apiserver to use directly instead of through the kube-apiserver's aggregator")
	fs.StringVar(&o.VirtAPIServerCAFile, "virt-apiserver-ca-file", o.VirtAPIServerCAFile, "CA bundle of --virt-apiserver-host's serving certificate")
	fs.StringVar(&o.ContentType, "content-type", o.ContentType, "content type of requests to the API servers")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to each API server")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to each API server")
}

// Configs are the client configurations of the kube-apiserver and of
// virt-apiserver, both sending userAgent.
func (o *Options) Configs(userAgent string) (kube, virt *rest.Config, err error) {
	var base *rest.Config
	if o.Kubeconfig == "" {
		base, err = rest.InClusterConfig()
	} else {
		base, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("client configuration: %w", err)
	}
	base.UserAgent = userAgent
	base.QPS, base.Burst = o.QPS, o.Burst
	base.ContentType = o.ContentType
	if o.ContentType != runtime.ContentTypeJSON {
		base.AcceptContentTypes = o.ContentType + "," + runtime.ContentTypeJSON
	}
	kube = rest.CopyConfig(base)
	virt = rest.CopyConfig(base)
	if o.VirtAPIServerHost != "" {
		virt.Host = o.VirtAPIServerHost
		if o.VirtAPIServerCAFile != "" {
			virt.TLSClientConfig.CAFile = o.VirtAPIServerCAFile
			virt.TLSClientConfig.CAData = nil
		}
	}
	return kube, virt, nil
}

// Clients are the clients of the kube-apiserver and of virt-apiserver.
func (o *Options) Clients(userAgent string) (kubernetes.Interface, virtclient.Interface, error) {
	kubeCfg, virtCfg, err := o.Configs(userAgent)
	if err != nil {
		return nil, nil, err
	}
	kube, err := kubernetes.NewForConfig(kubeCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kube-apiserver client: %w", err)
	}
	virt, err := virtclient.NewForConfig(virtCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("virt-apiserver client: %w", err)
	}
	return kube, virt, nil
}

// NewRecorder returns a recorder of events about Kubernetes and
// virtualization objects, and the function that stops it. The broadcaster
// outlives ctx, so that events of the shutdown itself (a Lease's release)
// are still sent; stop ends it.
func NewRecorder(ctx context.Context, kube kubernetes.Interface, source corev1.EventSource) (recorder record.EventRecorder, stop func(), err error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	if err := virtv1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartStructuredLogging(3)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return broadcaster.NewRecorder(scheme, source), broadcaster.Shutdown, nil
}
