package certificate

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultMaxLifetime caps a handler certificate's lifetime. The handlers
// ask for less (node/guestaccess) and renew at 70-90 % of it; a stolen
// key is good for at most this long.
const DefaultMaxLifetime = 7 * 24 * time.Hour

// Reasons of the conditions the controller sets.
const (
	ReasonApproved = "AutoApproved"
	ReasonDenied   = "NotThisNodesHandler"
	// ReasonSignerFailure is kube-controller-manager's reason for a request
	// its signer refuses.
	ReasonSignerFailure = "SignerValidationFailure"
)

// Config is what the controller approves and signs with.
type Config struct {
	// Requester is the handlers' service account.
	Requester Requester
	// CA signs the certificates.
	CA CA
	// MaxLifetime caps the lifetime of a certificate.
	MaxLifetime time.Duration
	// Profile is the signer's policy; the zero Profile is
	// GuestAccessServing.
	Profile Profile
}

func (c Config) profile() Profile {
	if c.Profile.SignerName == "" {
		return GuestAccessServing
	}
	return c.Profile
}

// Controller approves and signs the handlers' serving certificates.
// Create it with New and start it with Run.
type Controller struct {
	kube   kubernetes.Interface
	lister certlisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	getPod PodGetter
	queue  workqueue.TypedRateLimitingInterface[string]
	cfg    Config
	p      Profile
	clock  clock.PassiveClock
}

// New wires the controller to csrs, an informer restricted to the signer's
// requests (ListOptions of SignerSelector); the requesting pods are read
// through kube.
func New(ctx context.Context, kube kubernetes.Interface, csrs certinformers.CertificateSigningRequestInformer, cfg Config, c clock.PassiveClock) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		kube:   kube,
		lister: csrs.Lister(),
		synced: csrs.Informer().HasSynced,
		getPod: func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
			return kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		cfg:   cfg,
		p:     cfg.profile(),
		clock: c,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificate"},
		),
	}
	if _, err := csrs.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueue,
		UpdateFunc: func(_, obj any) { ctrl.enqueue(obj) },
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch certificate signing requests: %w", err)
	}
	return ctrl, nil
}

// SignerSelector is the field selector of the guest-access requests
// (GuestAccessServing.Selector).
func SignerSelector() string { return GuestAccessServing.Selector() }

func (c *Controller) enqueue(obj any) {
	if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok && csr.Spec.SignerName == c.p.SignerName && !done(csr) {
		c.queue.Add(csr.Name)
	}
}

// Run approves and signs with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting certificate controller", "signer", c.p.SignerName, "requester", c.cfg.Requester.UserName())
	defer logger.Info("Stopped certificate controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("certificate controller: caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.worker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "csr", key)
	if err := c.sync(klog.NewContext(ctx, logger), key); err != nil {
		logger.Error(err, "Sync failed, requeuing")
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync approves or denies the request name, then signs it once approved.
func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if csr.Spec.SignerName != c.p.SignerName || done(csr) {
		return nil
	}
	if !has(csr, certificatesv1.CertificateApproved) {
		if csr, err = c.approve(ctx, csr.DeepCopy()); err != nil || !has(csr, certificatesv1.CertificateApproved) {
			return err
		}
	}
	return c.sign(ctx, csr.DeepCopy())
}

// approve approves csr or denies it with the reason, and returns it as
// written.
func (c *Controller) approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, error) {
	logger := klog.FromContext(ctx)
	cond := certificatesv1.CertificateSigningRequestCondition{
		Status:         corev1.ConditionTrue,
		LastUpdateTime: metav1.NewTime(c.clock.Now()),
	}
	switch err := review(ctx, c.p, csr, c.cfg.Requester, c.getPod); {
	case isRefusal(err):
		cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateDenied, ReasonDenied, err.Error()
		logger.Info("Denied a "+c.p.What, "requester", csr.Spec.Username, "why", err.Error())
	case err != nil:
		return nil, err
	default:
		node := csr.Spec.Extra[NodeNameExtra][0]
		cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateApproved, ReasonApproved,
			fmt.Sprintf("virt-controller approved the %s of node %s", c.p.What, node)
		logger.Info("Approved a "+c.p.What, "node", node)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
	updated, err := c.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("write the approval: %w", err)
	}
	return updated, nil
}

// sign issues the certificate of an approved csr, or marks it Failed when
// it is not a handler's serving certificate request.
func (c *Controller) sign(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	now := c.clock.Now()
	req, node, err := requestedNode(c.p, csr)
	if err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue,
			Reason: ReasonSignerFailure, Message: err.Error(), LastUpdateTime: metav1.NewTime(now),
		})
		_, err := c.kube.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
		return err
	}
	ca, key, err := c.cfg.CA.load()
	if err != nil {
		return err
	}
	life := lifetime(csr, c.cfg.MaxLifetime)
	pem, err := issue(c.p, ca, key, req, now, life)
	if err != nil {
		return err
	}
	csr.Status.Certificate = pem
	if _, err := c.kube.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write the certificate: %w", err)
	}
	klog.FromContext(ctx).Info("Signed a "+c.p.What, "node", node, "lifetime", life)
	return nil
}

// done reports whether nothing is left to do for csr: denied, failed or
// issued.
func done(csr *certificatesv1.CertificateSigningRequest) bool {
	return len(csr.Status.Certificate) > 0 || has(csr, certificatesv1.CertificateDenied) || has(csr, certificatesv1.CertificateFailed)
}

func has(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
