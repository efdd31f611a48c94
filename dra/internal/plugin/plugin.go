// Package plugin is the node side of the mig.tessera.io driver: the kubelet
// plugin whose NodePrepareResources makes the MIG instance a claim was
// allocated (GPU instance at its start, and its full compute instance) and
// whose NodeUnprepareResources destroys it, through the project's NVML layer
// (Mig). Containers get the instance through a CDI spec per claim.
//
// Crash safety: a claim is recorded in the checkpoint as "preparing", with
// its devices, before any instance is made, and as "prepared" once every
// instance and the CDI spec exist; Unprepare destroys what the checkpoint
// lists and forgets the claim last. Creating finds an instance already made
// and destroying one already gone succeeds, so a plugin killed at any point
// and asked again (the kubelet retries) ends where an uninterrupted one
// would, with no orphan instance. Two claims never get overlapping memory
// slices on one GPU: the scheduler's counters forbid it, and the plugin
// refuses it again.
package plugin

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"tessera.local/dra/internal/slices"
)

// placement is a device of this node by GPU and NVML profile.
type placement struct {
	gpu, profileID, start, size int
}

// Driver implements kubeletplugin.DRAPlugin.
type Driver struct {
	node       string
	mig        Mig
	cdiDir     string
	checkpoint string

	mu      sync.Mutex
	devices map[string]placement // every legal device of this node, by name
}

// NewDriver reads the node's GPUs through mig and names their devices as the
// controller does. stateDir holds the checkpoint; cdiDir the CDI specs.
func NewDriver(ctx context.Context, node string, mig Mig, stateDir, cdiDir string) (*Driver, []slices.GPU, error) {
	gpus, err := mig.Inventory(ctx)
	if err != nil {
		return nil, nil, err
	}
	d := &Driver{
		node: node, mig: mig, cdiDir: cdiDir,
		checkpoint: filepath.Join(stateDir, "checkpoint.json"),
		devices:    map[string]placement{},
	}
	var annotated []slices.GPU
	for _, gpu := range gpus {
		if !gpu.MigEnabled {
			continue
		}
		annotated = append(annotated, slices.GPU{Index: gpu.Index, UUID: gpu.UUID, Model: gpu.Name})
		for _, p := range gpu.Profiles {
			for _, start := range p.Starts {
				d.devices[slices.DeviceName(gpu.Index, p.Name, start)] = placement{
					gpu: gpu.Index, profileID: p.ID, start: start, size: p.MemorySlices,
				}
			}
		}
	}
	if _, err := loadCheckpoint(d.checkpoint); err != nil {
		return nil, nil, err
	}
	return d, annotated, nil
}

// PrepareResourceClaims implements kubeletplugin.DRAPlugin.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cp, err := loadCheckpoint(d.checkpoint)
	if err != nil {
		return nil, err
	}
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		devices, err := d.prepare(ctx, cp, claim)
		out[claim.UID] = kubeletplugin.PrepareResult{Err: err, Devices: devices}
	}
	return out, nil
}

func (d *Driver) prepare(ctx context.Context, cp *Checkpoint, claim *resourceapi.ResourceClaim) ([]kubeletplugin.Device, error) {
	uid := string(claim.UID)
	if done, ok := cp.Claims[uid]; ok && done.State == statePrepared {
		return resultDevices(uid, done.Devices), nil
	}
	if claim.Status.Allocation == nil {
		return nil, fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
	}
	var devices []PreparedDevice
	for _, result := range claim.Status.Allocation.Devices.Results {
		if result.Driver != slices.DriverName || result.Pool != d.node {
			continue
		}
		p, ok := d.devices[result.Device]
		if !ok {
			return nil, fmt.Errorf("claim %s/%s: device %q is not a MIG placement of node %s", claim.Namespace, claim.Name, result.Device, d.node)
		}
		devices = append(devices, PreparedDevice{
			Request: result.Request, Pool: result.Pool, Device: result.Device,
			GPU: p.gpu, ProfileID: p.profileID, Start: p.start,
		})
	}
	if err := d.checkOverlap(cp, uid, devices); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	cp.Claims[uid] = PreparedClaim{Namespace: claim.Namespace, Name: claim.Name, State: statePreparing, Devices: devices}
	if err := cp.save(d.checkpoint); err != nil {
		return nil, err
	}
	for i := range devices {
		made, err := d.mig.Create(ctx, devices[i].GPU, devices[i].ProfileID, devices[i].Start)
		if err != nil {
			return nil, fmt.Errorf("claim %s/%s: device %s: %w", claim.Namespace, claim.Name, devices[i].Device, err)
		}
		devices[i].MigUUID = made.UUID
	}
	if err := writeCDISpec(d.cdiDir, uid, devices); err != nil {
		return nil, err
	}
	cp.Claims[uid] = PreparedClaim{Namespace: claim.Namespace, Name: claim.Name, State: statePrepared, Devices: devices}
	if err := cp.save(d.checkpoint); err != nil {
		return nil, err
	}
	return resultDevices(uid, devices), nil
}

// checkOverlap refuses devices whose memory slices another claim's
// instances hold on the same GPU.
func (d *Driver) checkOverlap(cp *Checkpoint, uid string, devices []PreparedDevice) error {
	for otherUID, other := range cp.Claims {
		if otherUID == uid {
			continue
		}
		for _, held := range other.Devices {
			h := d.devices[held.Device]
			for _, want := range devices {
				w := d.devices[want.Device]
				if h.gpu == w.gpu && h.start < w.start+w.size && w.start < h.start+h.size {
					return fmt.Errorf("device %s overlaps %s, held by claim %s/%s", want.Device, held.Device, other.Namespace, other.Name)
				}
			}
		}
	}
	return nil
}

func resultDevices(uid string, devices []PreparedDevice) []kubeletplugin.Device {
	out := make([]kubeletplugin.Device, 0, len(devices))
	for _, d := range devices {
		out = append(out, kubeletplugin.Device{
			Requests: []string{d.Request}, PoolName: d.Pool, DeviceName: d.Device,
			CDIDeviceIDs: []string{CDIKind + "=" + cdiName(uid, d.Device)},
		})
	}
	return out
}

// UnprepareResourceClaims implements kubeletplugin.DRAPlugin.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cp, err := loadCheckpoint(d.checkpoint)
	if err != nil {
		return nil, err
	}
	out := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		out[claim.UID] = d.unprepare(ctx, cp, string(claim.UID))
	}
	return out, nil
}

func (d *Driver) unprepare(ctx context.Context, cp *Checkpoint, uid string) error {
	held, ok := cp.Claims[uid]
	if !ok {
		return nil // never prepared here, or unprepared already
	}
	for _, device := range held.Devices {
		if err := d.mig.Destroy(ctx, device.GPU, device.Start); err != nil {
			return fmt.Errorf("claim %s/%s: device %s: %w", held.Namespace, held.Name, device.Device, err)
		}
	}
	if err := removeCDISpec(d.cdiDir, uid); err != nil {
		return err
	}
	delete(cp.Claims, uid)
	return cp.save(d.checkpoint)
}

// Prepared lists the claims the checkpoint holds, by UID, sorted.
func (d *Driver) Prepared() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cp, err := loadCheckpoint(d.checkpoint)
	if err != nil {
		return nil, err
	}
	var uids []string
	for uid := range cp.Claims {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	return uids, nil
}

// HandleError implements kubeletplugin.DRAPlugin: the plugin publishes no
// slices (the controller does), so errors here are the helper's own.
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}

// WatchHealthStatus implements kubeletplugin.DRAPlugin: device health is
// not reported.
func (d *Driver) WatchHealthStatus(context.Context, chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}
