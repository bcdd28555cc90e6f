package virtualmachineinstance

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/migrationproxy"
	"kubevirt.dev/virt/node/monitor"
)

// Event reasons of live migrations, on the VMI.
const (
	ReasonMigrationTargetPrepared = "MigrationTargetPrepared"
	ReasonMigrationStarted        = "MigrationStarted"
	ReasonMigrationFailed         = "MigrationFailed"
	ReasonMigrationAborted        = "MigrationAborted"
	ReasonMigrated                = "Migrated"
)

// KubeVirt's values of migrationState.mode and abortStatus.
const (
	modePreCopy  = virtv1.MigrationPreCopy
	abortDone    = virtv1.MigrationAbortSucceeded
	abortTooLate = virtv1.MigrationAbortFailed
	abortRunning = virtv1.MigrationAbortInProgress
)

// MigrationConfig is what the node needs to take part in live migrations
// (docs/migration.md, "Node side").
type MigrationConfig struct {
	// Address is the IP the target's listeners bind to and that goes into
	// migrationState.targetNodeAddress: the handler pod's.
	Address string
	// Identity is the node's migration certificate and CA.
	Identity migrationproxy.Identity
}

// migrations are the proxies of the migrations this node takes part in, by
// VMI key.
type migrations struct {
	mu      sync.Mutex
	sources map[string]*sourceMigration
	targets map[string]*targetMigration
	// counted are the migration UIDs whose outcome the metrics counted.
	counted sets.Set[types.UID]
}

type sourceMigration struct {
	uid     types.UID
	address string
	ports   map[string]int32
	proxy   *migrationproxy.Source
	// migrating: Migrate was answered.
	migrating bool
	// cancelled: CancelMigration was answered.
	cancelled bool
}

type targetMigration struct {
	uid    types.UID
	podUID types.UID
	proxy  *migrationproxy.Target
	ports  map[string]int32
}

func newMigrations() *migrations {
	return &migrations{sources: map[string]*sourceMigration{}, targets: map[string]*targetMigration{}, counted: sets.New[types.UID]()}
}

// WatchMigrationTargets has the controller prepare, on this node, the
// targets of the VMIs vmis lists: an informer restricted to
// status.migrationState.targetNode=<this node> (virt-apiserver indexes
// it). Without it, or without Config.Migration, the node is never a
// migration target. Call it before Run.
func (c *Controller) WatchMigrationTargets(ctx context.Context, vmis virtinformers.VirtualMachineInstanceInformer) error {
	logger := klog.FromContext(ctx)
	c.targetLister = vmis.Lister()
	c.synced = append(c.synced, vmis.Informer().HasSynced)
	_, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return fmt.Errorf("watch migration targets: %w", err)
	}
	return nil
}

// migrationOf is vmi's migration if it has one that is not over.
func migrationOf(vmi *virtv1.VirtualMachineInstance) *virtv1.VirtualMachineInstanceMigrationState {
	ms := vmi.Status.MigrationState
	if ms == nil || ms.MigrationUID == "" || ms.Completed || ms.Failed || vmi.Status.Phase.IsFinal() {
		return nil
	}
	return ms
}

// targetVMI is the VMI of key if this node is the target of its running
// migration, else nil.
func (c *Controller) targetVMI(key string) *virtv1.VirtualMachineInstance {
	if c.targetLister == nil || c.cfg.Migration == nil {
		return nil
	}
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := c.targetLister.VirtualMachineInstances(namespace).Get(name)
	if err != nil {
		return nil
	}
	vmi = c.fresher(key, vmi)
	if ms := migrationOf(vmi); ms == nil || ms.TargetNode != c.cfg.NodeName || vmi.DeletionTimestamp != nil {
		return nil
	}
	return vmi
}

// syncTarget prepares this node as the target of key's migration, or
// tears the target down once the migration is over here.
func (c *Controller) syncTarget(ctx context.Context, key string) error {
	vmi := c.targetVMI(key)
	if vmi == nil {
		c.closeTarget(key, false)
		return nil
	}
	ms := vmi.Status.MigrationState
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "migration", ms.MigrationUID, "role", "target")
	ctx = klog.NewContext(ctx, logger)
	pod, err := c.podLister.Pods(vmi.Namespace).Get(ms.TargetPod)
	switch {
	case apierrors.IsNotFound(err):
		return nil // its add enqueues the VMI
	case err != nil:
		return err
	case pod.Spec.NodeName != c.cfg.NodeName || types.UID(pod.Labels[virtv1.CreatedByLabel]) != vmi.UID:
		return fmt.Errorf("target pod %s/%s is not a launcher pod of VMI %s on node %s", pod.Namespace, pod.Name, vmi.UID, c.cfg.NodeName)
	case vmipod.Exited(pod):
		// The source's job fails with it; the source's handler says so.
		c.closeTarget(key, true)
		return nil
	}
	if _, active := vmi.Status.ActivePods[pod.UID]; !active {
		return nil // not handed over yet
	}
	l, err := c.monitor.Watch(monitor.Target{PodUID: pod.UID, VMIKey: key, VMIUID: vmi.UID, PrivateDir: c.cfg.PodFiles.PrivateDir(string(pod.UID))})
	if err != nil {
		return err
	}
	st := l.State()
	if st.Info == nil {
		c.queue.AddAfter(key, c.cfg.UnreachableAfter)
		return nil // the watch reports as soon as the launcher serves
	}
	tm, err := c.prepareTarget(ctx, vmi, pod, l)
	if err != nil {
		return err
	}
	d := st.Domain
	if m := d.GetMigration(); m.GetMigrationUid() == string(ms.MigrationUID) &&
		m.GetState() == apiv1.MigrationState_MIGRATION_STATE_COMPLETED && d.GetState() == apiv1.DomainState_DOMAIN_STATE_RUNNING {
		return c.switchOver(ctx, vmi, d)
	}
	if ms.TargetNodeAddress == c.cfg.Migration.Address && maps.Equal(ms.TargetDirectMigrationNodePorts, tm.ports) {
		return nil
	}
	next := vmi.Status.DeepCopy()
	next.MigrationState.TargetNodeAddress = c.cfg.Migration.Address
	next.MigrationState.TargetDirectMigrationNodePorts = maps.Clone(tm.ports)
	if _, err := c.writeStatus(ctx, vmi, next); err != nil {
		return err
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonMigrationTargetPrepared, "Migration target ready on node %s (pod %s)", c.cfg.NodeName, pod.Name)
	return nil
}

// prepareTarget readies the target pod once per migration (and again after
// a restart of this handler): the NICs as for a source, the launcher's
// PrepareMigrationTarget, the proxy's listeners.
func (c *Controller) prepareTarget(ctx context.Context, vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod, l *monitor.Launcher) (*targetMigration, error) {
	key := vmi.Namespace + "/" + vmi.Name
	ms := vmi.Status.MigrationState
	c.migrations.mu.Lock()
	tm := c.migrations.targets[key]
	c.migrations.mu.Unlock()
	if tm != nil && tm.uid == ms.MigrationUID && tm.podUID == pod.UID {
		return tm, nil
	}
	c.closeTarget(key, false)
	dir := l.Target().PrivateDir
	nics, err := c.cfg.Network.Prepare(ctx, vmi, dir)
	if err != nil {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonNetworkSetupFailed, "Preparing the migration target's pod network failed, will retry: %v", err)
		return nil, fmt.Errorf("prepare the target pod's network: %w", err)
	}
	if err := l.PrepareMigrationTarget(ctx, vmi, nics, string(ms.MigrationUID)); err != nil {
		return nil, err
	}
	proxy, err := migrationproxy.ListenTarget(context.WithoutCancel(ctx), migrationproxy.TargetConfig{
		Address:    c.cfg.Migration.Address,
		Pod:        dir,
		SourceNode: ms.SourceNode,
		Identity:   c.cfg.Migration.Identity,
	})
	if err != nil {
		return nil, fmt.Errorf("listen for the migration: %w", err)
	}
	ports := map[string]int32{}
	for p, tag := range migrationproxy.Ports(proxy.Ports()) {
		ports[p] = int32(tag)
	}
	tm = &targetMigration{uid: ms.MigrationUID, podUID: pod.UID, proxy: proxy, ports: ports}
	c.migrations.mu.Lock()
	c.migrations.targets[key] = tm
	c.migrations.mu.Unlock()
	klog.FromContext(ctx).Info("Migration target prepared", "pod", pod.Name, "address", c.cfg.Migration.Address, "ports", ports)
	return tm, nil
}

// switchOver records, in one write, that the guest runs here now: the
// migration completed and the VMI is this node's (nodeName). From then on
// the VMI's sync on this node adopts the launcher like any other.
func (c *Controller) switchOver(ctx context.Context, vmi *virtv1.VirtualMachineInstance, d *apiv1.Domain) error {
	now := metav1.NewTime(c.clock.Now())
	next := vmi.Status.DeepCopy()
	ms := next.MigrationState
	ms.Completed = true
	ms.EndTimestamp = &now
	ms.TargetNodeDomainDetected = true
	ms.TargetNodeDomainReadyTimestamp = &now
	setDowntime(ms, d.GetMigration().GetDowntimeMs())
	next.NodeName = c.cfg.NodeName
	written, err := c.writeStatus(ctx, vmi, next)
	if err != nil {
		return err
	}
	c.closeTarget(vmi.Namespace+"/"+vmi.Name, false)
	klog.FromContext(ctx).Info("Migration completed: the guest runs on this node", "downtimeMs", d.GetMigration().GetDowntimeMs())
	c.recorder.Eventf(written, corev1.EventTypeNormal, ReasonMigrated, "The guest runs on node %s (pod %s) after a live migration from node %s; downtime %d ms",
		c.cfg.NodeName, ms.TargetPod, ms.SourceNode, d.GetMigration().GetDowntimeMs())
	c.countOutcome(written, d.GetMigration(), true)
	return nil
}

// proxyDrainGrace bounds how long a migration proxy carries its open
// connections once the migration ended on its side (Drain): libvirt's last
// exchanges between the two ends take milliseconds to seconds.
const proxyDrainGrace = time.Minute

// closeTarget stops key's target proxy from accepting connections and lets
// the open ones end by themselves (Drain, in the background): the source's
// libvirt still waits for the target's answer when the guest already runs
// here, and cut off it would resume its own copy. forget also drops the
// watch of its launcher (a migration that failed: its pod goes away).
func (c *Controller) closeTarget(key string, forget bool) {
	c.migrations.mu.Lock()
	tm := c.migrations.targets[key]
	delete(c.migrations.targets, key)
	c.migrations.mu.Unlock()
	if tm == nil {
		return
	}
	go tm.proxy.Drain(proxyDrainGrace)
	if forget {
		c.monitor.Forget(tm.podUID)
	}
}

// syncSource moves the source side of vmi's migration along: vmi is this
// node's and its guest runs in obs's launcher.
func (c *Controller) syncSource(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation) error {
	key := vmi.Namespace + "/" + vmi.Name
	ms := migrationOf(vmi)
	if ms == nil || c.cfg.Migration == nil || obs.launcher == nil {
		c.closeSource(key)
		return nil
	}
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "migration", ms.MigrationUID, "role", "source")
	ctx = klog.NewContext(ctx, logger)
	m := obs.state.Domain.GetMigration()
	if m.GetMigrationUid() != string(ms.MigrationUID) {
		m = nil
	}
	observeProgress(vmi, c.cfg.NodeName, m)
	switch {
	case ms.StartTimestamp == nil && ms.AbortRequested:
		// Cancelled before it started: nothing runs to abort.
		return c.writeSourceEnd(ctx, vmi, abortDone, "Migration aborted before it started")
	case ms.StartTimestamp == nil && (ms.TargetNodeAddress == "" || len(ms.TargetDirectMigrationNodePorts) == 0):
		return nil // the target is not ready yet
	case m.GetState() == apiv1.MigrationState_MIGRATION_STATE_FAILED:
		abort := virtv1.MigrationAbortStatus("")
		if ms.AbortRequested {
			abort = abortDone
		}
		return c.writeSourceEnd(ctx, vmi, abort, m.GetFailureReason())
	case m.GetState() == apiv1.MigrationState_MIGRATION_STATE_CANCELLED:
		return c.writeSourceEnd(ctx, vmi, abortDone, m.GetFailureReason())
	case m.GetState() == apiv1.MigrationState_MIGRATION_STATE_COMPLETED:
		// The target writes completed (and counts it); this launcher
		// stops MIGRATED.
		c.closeSource(key)
		observeDowntime(vmi, c.cfg.NodeName, m)
		if ms.AbortRequested && ms.AbortStatus != abortTooLate {
			next := vmi.Status.DeepCopy()
			next.MigrationState.AbortStatus = abortTooLate
			_, err := c.writeStatus(ctx, vmi, next)
			return err
		}
		return nil
	}
	sm, err := c.sourceProxy(ctx, vmi, obs)
	if err != nil {
		return err
	}
	if !sm.migrating {
		// Once per proxy: after a restart of this handler the launcher may
		// run the job already (Migrate of the same UID is a no-op).
		if err := obs.launcher.Migrate(ctx, migrateRequest(ms)); err != nil {
			return err
		}
		c.migrations.mu.Lock()
		sm.migrating = true
		c.migrations.mu.Unlock()
	}
	if ms.StartTimestamp == nil {
		now := metav1.NewTime(c.clock.Now())
		next := vmi.Status.DeepCopy()
		next.MigrationState.StartTimestamp = &now
		next.MigrationState.Mode = modePreCopy
		written, err := c.writeStatus(ctx, vmi, next)
		if err != nil {
			return err
		}
		logger.Info("Migration started", "target", ms.TargetNode, "address", ms.TargetNodeAddress)
		c.recorder.Eventf(written, corev1.EventTypeNormal, ReasonMigrationStarted, "Live migration to node %s started", ms.TargetNode)
		return nil
	}
	if ms.AbortRequested && !sm.cancelled {
		if err := obs.launcher.CancelMigration(ctx, string(ms.MigrationUID)); err != nil {
			return err
		}
		c.migrations.mu.Lock()
		sm.cancelled = true
		c.migrations.mu.Unlock()
		if ms.AbortStatus != abortRunning {
			next := vmi.Status.DeepCopy()
			next.MigrationState.AbortStatus = abortRunning
			_, err := c.writeStatus(ctx, vmi, next)
			return err
		}
	}
	if mode := virtv1.MigrationMode(m.GetMode()); mode != "" && mode != ms.Mode {
		next := vmi.Status.DeepCopy()
		next.MigrationState.Mode = mode
		_, err := c.writeStatus(ctx, vmi, next)
		return err
	}
	return nil
}

// sourceProxy is the running source proxy of vmi's migration, started (or
// restarted towards a new target address) as needed.
func (c *Controller) sourceProxy(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation) (*sourceMigration, error) {
	key := vmi.Namespace + "/" + vmi.Name
	ms := vmi.Status.MigrationState
	c.migrations.mu.Lock()
	sm := c.migrations.sources[key]
	// A target within this node is this handler's too: the source
	// connects the pods directly (migrationproxy.SourceConfig.Local).
	var local *migrationproxy.Target
	if tm := c.migrations.targets[key]; tm != nil && ms.TargetNode == c.cfg.NodeName && tm.uid == ms.MigrationUID {
		local = tm.proxy
	}
	c.migrations.mu.Unlock()
	if sm != nil && sm.uid == ms.MigrationUID && sm.address == ms.TargetNodeAddress && maps.Equal(sm.ports, ms.TargetDirectMigrationNodePorts) {
		return sm, nil
	}
	c.closeSource(key)
	ports := map[string]int{}
	for p, tag := range ms.TargetDirectMigrationNodePorts {
		ports[p] = int(tag)
	}
	byKind, err := migrationproxy.ParsePorts(ports)
	if err != nil {
		return nil, fmt.Errorf("migrationState.targetDirectMigrationNodePorts: %w", err)
	}
	proxy, err := migrationproxy.ListenSource(context.WithoutCancel(ctx), migrationproxy.SourceConfig{
		Pod:           obs.launcher.Target().PrivateDir,
		TargetAddress: ms.TargetNodeAddress,
		TargetPorts:   byKind,
		TargetNode:    ms.TargetNode,
		Identity:      c.cfg.Migration.Identity,
		Local:         local,
	})
	if err != nil {
		return nil, fmt.Errorf("listen on the source pod's migration sockets: %w", err)
	}
	sm = &sourceMigration{uid: ms.MigrationUID, address: ms.TargetNodeAddress, ports: maps.Clone(ms.TargetDirectMigrationNodePorts), proxy: proxy}
	klog.FromContext(ctx).Info("Migration source proxy listening", "target", ms.TargetNode, "withinNode", local != nil)
	c.migrations.mu.Lock()
	c.migrations.sources[key] = sm
	c.migrations.mu.Unlock()
	return sm, nil
}

// writeSourceEnd records a migration that ended with the guest still
// here: failed, why, when, and how an abort went.
func (c *Controller) writeSourceEnd(ctx context.Context, vmi *virtv1.VirtualMachineInstance, abort virtv1.MigrationAbortStatus, reason string) error {
	key := vmi.Namespace + "/" + vmi.Name
	c.closeSource(key)
	m := &apiv1.Migration{MigrationUid: string(vmi.Status.MigrationState.MigrationUID)}
	c.countOutcome(vmi, m, false)
	now := metav1.NewTime(c.clock.Now())
	next := vmi.Status.DeepCopy()
	ms := next.MigrationState
	ms.Failed = true
	ms.FailureReason = reason
	if ms.FailureReason == "" {
		ms.FailureReason = "Live migration failed"
	}
	ms.EndTimestamp = &now
	if abort != "" {
		ms.AbortStatus = abort
	}
	written, err := c.writeStatus(ctx, vmi, next)
	if err != nil {
		return err
	}
	reasonEvent := ReasonMigrationFailed
	if abort == abortDone {
		reasonEvent = ReasonMigrationAborted
	}
	klog.FromContext(ctx).Info("Migration ended; the guest runs here", "reason", ms.FailureReason, "abortStatus", ms.AbortStatus)
	c.recorder.Eventf(written, corev1.EventTypeWarning, reasonEvent, "Live migration to node %s ended, the guest runs on node %s: %s", ms.TargetNode, c.cfg.NodeName, ms.FailureReason)
	return nil
}

// closeSource stops key's source proxy from accepting connections and
// lets the open ones end by themselves (Drain, in the background): the
// switch-over moves the VMI off this node while the source's libvirt
// still finishes its exchange with the target's.
func (c *Controller) closeSource(key string) {
	c.migrations.mu.Lock()
	sm := c.migrations.sources[key]
	delete(c.migrations.sources, key)
	c.migrations.mu.Unlock()
	if sm != nil {
		go sm.proxy.Drain(proxyDrainGrace)
	}
}

// countOutcome counts a migration's end in the metrics once.
func (c *Controller) countOutcome(vmi *virtv1.VirtualMachineInstance, m *apiv1.Migration, succeeded bool) {
	uid := types.UID(m.GetMigrationUid())
	c.migrations.mu.Lock()
	first := !c.migrations.counted.Has(uid)
	c.migrations.counted.Insert(uid)
	c.migrations.mu.Unlock()
	if first {
		observeOutcome(vmi, c.cfg.NodeName, m, succeeded)
	}
}

// migrateRequest is the launcher's Migrate call for ms, with the effective
// configuration virt-controller wrote.
func migrateRequest(ms *virtv1.VirtualMachineInstanceMigrationState) *apiv1.MigrateRequest {
	req := &apiv1.MigrateRequest{MigrationUid: string(ms.MigrationUID)}
	conf := ms.MigrationConfiguration
	if conf == nil {
		return req
	}
	if q := conf.BandwidthPerMigration; q != nil && q.Value() > 0 {
		req.BandwidthBytesPerSecond = uint64(q.Value())
	}
	if v := conf.CompletionTimeoutPerGiB; v != nil {
		req.CompletionTimeoutPerGibSeconds = *v
	}
	if v := conf.ProgressTimeout; v != nil {
		req.ProgressTimeoutSeconds = *v
	}
	if v := conf.AllowAutoConverge; v != nil {
		req.AllowAutoConverge = *v
	}
	if v := conf.AllowPostCopy; v != nil {
		req.AllowPostCopy = *v
	}
	if v := conf.MaxDowntimeMs; v != nil {
		req.MaxDowntimeMs = *v
	}
	return req
}

// migratedAway reports whether obs is of a launcher whose guest left by a
// completed live migration: it stopped MIGRATED, or exited ExitMigrated.
// Such a launcher never ends the VMI: the guest runs elsewhere.
func migratedAway(obs *observation) bool {
	if obs.ended.GetStopReason() == apiv1.StopReason_STOP_REASON_MIGRATED {
		return true
	}
	if obs.pod != nil {
		if t := vmipod.ComputeTerminated(obs.pod); t != nil && int(t.ExitCode) == apiv1.ExitMigrated {
			return true
		}
	}
	return false
}

// migrationTargetPods are the pods of this node that VMIs migrating here
// count on: their launchers are not strays.
func (c *Controller) migrationTargetPods() sets.Set[types.UID] {
	pods := sets.New[types.UID]()
	if c.targetLister == nil {
		return pods
	}
	vmis, _ := c.targetLister.List(labels.Everything())
	for _, vmi := range vmis {
		ms := vmi.Status.MigrationState
		if ms == nil || ms.TargetNode != c.cfg.NodeName || vmi.Status.Phase.IsFinal() {
			continue
		}
		for uid := range vmi.Status.ActivePods {
			pods.Insert(uid)
		}
	}
	return pods
}
