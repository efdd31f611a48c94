// Package slices turns a cluster's MIG GPUs into the ResourceSlices of the
// mig.tessera.io driver (resource.k8s.io/v1, partitionable devices).
//
// One pool per node, named after it and selecting it by name. Its first
// slices hold the shared counters, one CounterSet per GPU ("gpu-<index>"):
// a counter per memory slice ("memory-slice-<k>", value 1), the GPU's
// compute slices ("compute-slices") and its memory ("memory"). The other
// slices hold the devices, one per (GPU, profile, start) published, each
// consuming the memory-slice counters start..start+size-1 and its compute
// and memory share of its GPU's set, so the allocator can never hand out
// two overlapping instances. Devices carry their profile, start, profile ID,
// size, GPU index, GPU UUID and GPU model as attributes (qualified by the
// driver name in CEL: device.attributes["mig.tessera.io"].profile).
package slices

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"tessera.local/dra/internal/steer"
)

// DriverName is the driver's name, its attributes' domain and its pools'
// driver field.
const DriverName = "mig.tessera.io"

// The API's limits on one slice: counter sets, and devices that consume
// counters.
const (
	maxCounterSetsPerSlice = resourceapi.ResourceSliceMaxCounterSets
	maxDevicesPerSlice     = resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures
)

// GPU is one MIG GPU of a node.
type GPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Model string `json:"model"` // as NVML names it, "NVIDIA A100-SXM4-80GB"
}

// DeviceName names the device of `profile` at `start` on GPU `gpu`: a DNS
// label such as "gpu3-1g-10gb-s4" (dots and pluses become dashes).
func DeviceName(gpu int, profile string, start int) string {
	label := strings.NewReplacer(".", "-", "+", "-").Replace(strings.ToLower(profile))
	return fmt.Sprintf("gpu%d-%s-s%d", gpu, label, start)
}

// CounterSetName names GPU `gpu`'s counter set.
func CounterSetName(gpu int) string { return fmt.Sprintf("gpu-%d", gpu) }

// MemorySliceCounter names the counter of memory slice `k`.
func MemorySliceCounter(k int) string { return fmt.Sprintf("memory-slice-%d", k) }

// Placed is a device of a node by its GPU and placement.
type Placed struct {
	GPU       int
	Placement steer.Placement
}

// Devices maps every legal device name of a node with `gpus` GPUs to its GPU
// and placement.
func Devices(geometry *steer.Geometry, gpus []GPU) map[string]Placed {
	out := make(map[string]Placed, len(gpus)*len(geometry.Placements))
	for _, gpu := range gpus {
		for _, p := range geometry.Placements {
			out[DeviceName(gpu.Index, p.Profile, p.Start)] = Placed{GPU: gpu.Index, Placement: p}
		}
	}
	return out
}

// Pool renders one node's pool. `publish` says which devices appear: every
// legal one when it returns true for all (publish-every-placement), or the
// steered few (offered or allocated).
func Pool(node string, geometry *steer.Geometry, gpus []GPU, publish func(gpu int, p steer.Placement) bool) resourceslice.Pool {
	sorted := append([]GPU(nil), gpus...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })

	var out []resourceslice.Slice
	for first := 0; first < len(sorted); first += maxCounterSetsPerSlice {
		last := min(first+maxCounterSetsPerSlice, len(sorted))
		var sets []resourceapi.CounterSet
		for _, gpu := range sorted[first:last] {
			sets = append(sets, counterSet(geometry, gpu))
		}
		out = append(out, resourceslice.Slice{SharedCounters: sets})
	}
	var devices []resourceapi.Device
	for _, gpu := range sorted {
		for _, p := range geometry.Placements {
			if publish(gpu.Index, p) {
				devices = append(devices, device(geometry, gpu, p))
			}
		}
	}
	for first := 0; first < len(devices); first += maxDevicesPerSlice {
		last := min(first+maxDevicesPerSlice, len(devices))
		out = append(out, resourceslice.Slice{Devices: devices[first:last]})
	}
	if len(devices) == 0 {
		// An empty slice says the pool is there with nothing to offer now.
		out = append(out, resourceslice.Slice{Devices: []resourceapi.Device{}})
	}
	return resourceslice.Pool{
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}},
		}}},
		Slices: out,
	}
}

func counterSet(geometry *steer.Geometry, gpu GPU) resourceapi.CounterSet {
	counters := map[string]resourceapi.Counter{
		"compute-slices": {Value: *resource.NewQuantity(int64(geometry.ComputeSlices), resource.DecimalSI)},
		"memory":         {Value: *resource.NewQuantity(geometry.MemoryMiB<<20, resource.BinarySI)},
	}
	for k := 0; k < geometry.MemorySlices; k++ {
		counters[MemorySliceCounter(k)] = resourceapi.Counter{Value: *resource.NewQuantity(1, resource.DecimalSI)}
	}
	return resourceapi.CounterSet{Name: CounterSetName(gpu.Index), Counters: counters}
}

func device(geometry *steer.Geometry, gpu GPU, p steer.Placement) resourceapi.Device {
	consumed := map[string]resourceapi.Counter{
		"compute-slices": {Value: *resource.NewQuantity(int64(p.ComputeSlices), resource.DecimalSI)},
		"memory":         {Value: *resource.NewQuantity(p.MemoryMiB<<20, resource.BinarySI)},
	}
	for k := p.Start; k < p.Start+p.Size; k++ {
		consumed[MemorySliceCounter(k)] = resourceapi.Counter{Value: *resource.NewQuantity(1, resource.DecimalSI)}
	}
	return resourceapi.Device{
		Name: DeviceName(gpu.Index, p.Profile, p.Start),
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"profile":   {StringValue: ptr.To(p.Profile)},
			"profileID": {IntValue: ptr.To(int64(p.ProfileID))},
			"start":     {IntValue: ptr.To(int64(p.Start))},
			"size":      {IntValue: ptr.To(int64(p.Size))},
			"gpuIndex":  {IntValue: ptr.To(int64(gpu.Index))},
			"gpuUUID":   {StringValue: ptr.To(gpu.UUID)},
			"gpuModel":  {StringValue: ptr.To(geometry.Model)},
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory":        {Value: *resource.NewQuantity(p.MemoryMiB<<20, resource.BinarySI)},
			"computeSlices": {Value: *resource.NewQuantity(int64(p.ComputeSlices), resource.DecimalSI)},
		},
		ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
			CounterSet: CounterSetName(gpu.Index), Counters: consumed,
		}},
	}
}
