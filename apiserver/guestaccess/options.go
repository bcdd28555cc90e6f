package guestaccess

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options say where the handlers are and with which certificates to reach
// them.
type Options struct {
	// CertDir holds CAFile, CertFile and KeyFile; empty turns guest access
	// off.
	CertDir string
	// Namespace, Selector and PortName find the handlers: pods of
	// Namespace matching the label selector Selector, reached on their
	// container port named PortName.
	Namespace string
	Selector  string
	PortName  string
	// Resolver, when set, finds the handlers instead of an informer on
	// their pods. It is not a flag: tests and --standalone servers, which
	// have no kube-apiserver to watch pods in, set it.
	Resolver Resolver
}

// NewOptions returns the defaults of a cluster installed from artifacts/.
func NewOptions() *Options {
	return &Options{
		CertDir:   "/etc/virt-apiserver/handler-client",
		Namespace: "virt-system",
		Selector:  "app.kubernetes.io/name=virt-handler",
		PortName:  "guest-access",
	}
}

// AddFlags adds the flags of the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CertDir, "handler-client-cert-dir", o.CertDir,
		"Directory with ca.crt (the handler serving CA, which virt-controller signs the handlers' per-node certificates with), tls.crt and tls.key (virt-apiserver's client certificate) for guest access (console, VNC, pause, unpause, softreboot) through the virt-handlers. Without readable certificates guest access answers 503 and the rest of the API is served.")
	fs.StringVar(&o.Namespace, "handler-namespace", o.Namespace,
		"Namespace of the virt-handler pods.")
	fs.StringVar(&o.Selector, "handler-selector", o.Selector,
		"Label selector of the virt-handler pods.")
	fs.StringVar(&o.PortName, "handler-port-name", o.PortName,
		"Name of the virt-handler container port that serves guest access.")
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	var errs []error
	if o.CertDir == "" || o.Resolver != nil {
		return nil
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--handler-namespace is required with --handler-client-cert-dir"))
	}
	if o.PortName == "" {
		errs = append(errs, errors.New("--handler-port-name is required with --handler-client-cert-dir"))
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		errs = append(errs, fmt.Errorf("--handler-selector: %w", err))
	}
	return errs
}

// Handlers returns the handlers the options describe; kubeConfig reaches
// the kube-apiserver their pods are read from (nil without one). Guest
// access is off, not an error, when the certificates cannot be read or
// there is no way to find handlers: Handlers.Enabled says why, and the rest
// of the API does not depend on it.
func (o *Options) Handlers(kubeConfig *rest.Config) (*Handlers, error) {
	if o.CertDir == "" {
		return Off("--handler-client-cert-dir is empty"), nil
	}
	tlsConfig, err := LoadTLSConfig(o.CertDir)
	if err != nil {
		return Off(fmt.Sprintf("--handler-client-cert-dir %s: %v", o.CertDir, err)), nil
	}
	resolver := o.Resolver
	if resolver == nil {
		if kubeConfig == nil {
			return Off("no kube-apiserver to find the virt-handler pods in (--standalone)"), nil
		}
		config := rest.CopyConfig(kubeConfig)
		config.ContentType = runtime.ContentTypeProtobuf
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, fmt.Errorf("client for virt-handler pods: %w", err)
		}
		if resolver, err = NewPodResolver(client, o.Namespace, o.Selector, o.PortName); err != nil {
			return nil, err
		}
	}
	return New(resolver, tlsConfig), nil
}
