package slices

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"tessera.local/dra/internal/steer"
)

// A100-80GB as Tessera's catalog answers it: 18 placements of six profiles.
func a100() *steer.Geometry {
	g := &steer.Geometry{Model: "a100-80gb", MemorySlices: 8, ComputeSlices: 7, MemoryMiB: 81920}
	add := func(profile string, id, size, compute int, mib int64, starts ...int) {
		for _, s := range starts {
			g.Placements = append(g.Placements, steer.Placement{Profile: profile, ProfileID: id, Start: s, Size: size, ComputeSlices: compute, MemoryMiB: mib})
		}
	}
	add("1g.10gb", 19, 1, 1, 9728, 0, 1, 2, 3, 4, 5, 6)
	add("1g.20gb", 15, 2, 1, 19968, 0, 2, 4, 6)
	add("2g.20gb", 14, 2, 2, 19968, 0, 2, 4)
	add("3g.40gb", 9, 4, 3, 40192, 0, 4)
	add("4g.40gb", 5, 4, 4, 40192, 0)
	add("7g.80gb", 0, 8, 7, 80896, 0)
	return g
}

func gpus(n int) []GPU {
	var out []GPU
	for i := n - 1; i >= 0; i-- { // out of order: the pool sorts them
		out = append(out, GPU{Index: i, UUID: "GPU-x", Model: "NVIDIA A100-SXM4-80GB"})
	}
	return out
}

func all(int, steer.Placement) bool { return true }

func TestEveryPlacementOfEightGPUsFitsTheAPILimits(t *testing.T) {
	pool := Pool("node-a", a100(), gpus(9), all)
	var devices, sets int
	for i, slice := range pool.Slices {
		if len(slice.SharedCounters) > 0 && len(slice.Devices) > 0 {
			t.Fatalf("slice %d mixes counters and devices", i)
		}
		if len(slice.SharedCounters) > resourceapi.ResourceSliceMaxCounterSets {
			t.Fatalf("slice %d: %d counter sets", i, len(slice.SharedCounters))
		}
		if len(slice.Devices) > resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures {
			t.Fatalf("slice %d: %d devices", i, len(slice.Devices))
		}
		for _, set := range slice.SharedCounters {
			if len(set.Counters) != 10 { // 8 memory slices, compute, memory
				t.Fatalf("%s: %d counters", set.Name, len(set.Counters))
			}
			sets++
		}
		for _, d := range slice.Devices {
			if errs := validation.IsDNS1123Label(d.Name); len(errs) > 0 {
				t.Fatalf("device name %q: %v", d.Name, errs)
			}
			if len(d.Attributes)+len(d.Capacity) > resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
				t.Fatalf("%s: too many attributes", d.Name)
			}
			devices++
		}
	}
	if sets != 9 || devices != 9*18 {
		t.Fatalf("%d counter sets and %d devices, want 9 and %d", sets, devices, 9*18)
	}
	if got := pool.NodeSelector.NodeSelectorTerms[0].MatchFields[0]; got.Key != "metadata.name" || got.Values[0] != "node-a" {
		t.Fatalf("node selector %+v", got)
	}
}

func TestADeviceConsumesItsMemorySlicesComputeAndMemory(t *testing.T) {
	pool := Pool("n", a100(), gpus(2), func(gpu int, p steer.Placement) bool {
		return gpu == 1 && p.Profile == "3g.40gb" && p.Start == 4
	})
	if len(pool.Slices) != 2 || len(pool.Slices[1].Devices) != 1 {
		t.Fatalf("want one counter slice and one device: %+v", pool.Slices)
	}
	d := pool.Slices[1].Devices[0]
	if d.Name != "gpu1-3g-40gb-s4" {
		t.Fatalf("name %s", d.Name)
	}
	if *d.Attributes["profile"].StringValue != "3g.40gb" || *d.Attributes["start"].IntValue != 4 || *d.Attributes["gpuIndex"].IntValue != 1 || *d.Attributes["profileID"].IntValue != 9 {
		t.Fatalf("attributes %+v", d.Attributes)
	}
	c := d.ConsumesCounters[0]
	if c.CounterSet != "gpu-1" {
		t.Fatalf("counter set %s", c.CounterSet)
	}
	for k := 0; k < 8; k++ {
		_, has := c.Counters[MemorySliceCounter(k)]
		if has != (k >= 4) {
			t.Fatalf("memory slice %d consumed: %v", k, has)
		}
	}
	if v := c.Counters["compute-slices"].Value; v.Value() != 3 {
		t.Fatalf("compute slices %v", v.String())
	}
	if v := c.Counters["memory"].Value; v.Value() != 40192<<20 {
		t.Fatalf("memory %v", v.String())
	}
}

func TestAPoolWithNothingToOfferHasAnEmptySlice(t *testing.T) {
	pool := Pool("n", a100(), gpus(1), func(int, steer.Placement) bool { return false })
	if len(pool.Slices) != 2 || pool.Slices[1].Devices == nil || len(pool.Slices[1].Devices) != 0 {
		t.Fatalf("want counters then one empty device slice: %+v", pool.Slices)
	}
}

func TestDevicesNamesEveryPlacementOnce(t *testing.T) {
	devices := Devices(a100(), gpus(2))
	if len(devices) != 36 {
		t.Fatalf("%d devices", len(devices))
	}
	if p := devices["gpu0-1g-20gb-s6"]; p.GPU != 0 || p.Placement.ProfileID != 15 {
		t.Fatalf("%+v", p)
	}
	if DeviceName(2, "1g.10gb+me", 3) != "gpu2-1g-10gb-me-s3" {
		t.Fatal(DeviceName(2, "1g.10gb+me", 3))
	}
}
