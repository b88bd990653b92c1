package hardware

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// drmCard is one /sys/class/drm/cardN: a GPU the kernel's DRM subsystem drives.
type drmCard struct {
	Card        string // card0
	VendorID    uint16 // PCI vendor: 0x8086 Intel, 0x1002 AMD, 0x10de NVIDIA
	DeviceID    uint16
	Driver      string // i915, xe, amdgpu, nouveau, nvidia
	PCISlot     string // 0000:03:00.0
	ProductName string // device/product_name where the driver exposes one (amdgpu)
}

var cardName = regexp.MustCompile(`^card[0-9]+$`)

// readDRM lists root/sys/class/drm/card* (connectors such as card0-DP-1 and render
// nodes are skipped). A missing /sys/class/drm is no cards, with the reason.
func readDRM(root string) ([]drmCard, error) {
	dir := join(root, "sys/class/drm")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cards []drmCard
	for _, e := range entries {
		if !cardName.MatchString(e.Name()) {
			continue
		}
		dev := filepath.Join(dir, e.Name(), "device")
		c := drmCard{Card: e.Name()}
		c.VendorID, _ = parseHex16(readTrim(filepath.Join(dev, "vendor")))
		c.DeviceID, _ = parseHex16(readTrim(filepath.Join(dev, "device")))
		uevent := parseUevent(readTrim(filepath.Join(dev, "uevent")))
		// The driver is the name of the `driver` symlink's target; uevent's DRIVER= is
		// the same fact for trees where the link was not kept.
		if target, err := os.Readlink(filepath.Join(dev, "driver")); err == nil {
			c.Driver = filepath.Base(target)
		} else {
			c.Driver = uevent["DRIVER"]
		}
		c.PCISlot = uevent["PCI_SLOT_NAME"]
		if c.VendorID == 0 {
			if v, d, ok := strings.Cut(uevent["PCI_ID"], ":"); ok {
				c.VendorID, _ = parseHex16(v)
				c.DeviceID, _ = parseHex16(d)
			}
		}
		c.ProductName = readTrim(filepath.Join(dev, "product_name"))
		cards = append(cards, c)
	}
	sort.Slice(cards, func(i, j int) bool { return cardIndex(cards[i].Card) < cardIndex(cards[j].Card) })
	return cards, nil
}

func cardIndex(card string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(card, "card"))
	return n
}

// parseUevent reads KEY=VALUE lines.
func parseUevent(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[k] = v
		}
	}
	return out
}

func parseHex16(s string) (uint16, error) {
	s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "0x")
	if s == "" {
		return 0, fmt.Errorf("empty")
	}
	v, err := strconv.ParseUint(s, 16, 16)
	return uint16(v), err
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }
