package hardware

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Library is one vendor runtime library an execution provider dlopens.
type Library struct {
	Probe
	For   string   `json:"for"`             // which execution provider needs it
	Paths []string `json:"paths,omitempty"` // every match, ldconfig cache first
}

// wantedLibrary is a library to look for: basename glob patterns, where to look.
type wantedLibrary struct {
	name     string
	forEP    string
	patterns []string
	ortOnly  bool     // ONNX Runtime's own provider plugins: loaded from its directory only
	dirs     []string // extra directories vendors install to (relative to root)
}

var wantedLibraries = []wantedLibrary{
	{name: "cuda-runtime", forEP: "CUDA, TensorRT", patterns: []string{"libcudart.so*"}, dirs: []string{"usr/local/cuda/lib64"}},
	{name: "cublas", forEP: "CUDA, TensorRT", patterns: []string{"libcublasLt.so*"}, dirs: []string{"usr/local/cuda/lib64"}},
	{name: "cudnn", forEP: "CUDA", patterns: []string{"libcudnn.so*"}, dirs: []string{"usr/local/cuda/lib64"}},
	{name: "tensorrt", forEP: "TensorRT", patterns: []string{"libnvinfer.so*"}},
	{name: "openvino", forEP: "OpenVINO", patterns: []string{"libopenvino.so*"}, dirs: []string{"opt/intel/openvino/runtime/lib/intel64"}},
	{name: "qnn-htp", forEP: "QNN (HTP backend)", patterns: []string{"libQnnHtp.so"}},
	{name: "qnn-cpu", forEP: "QNN (CPU backend)", patterns: []string{"libQnnCpu.so"}},
	{name: "migraphx", forEP: "MIGraphX", patterns: []string{"libmigraphx*.so*"}, dirs: []string{"opt/rocm/lib"}},
	{name: "rocm-hip", forEP: "MIGraphX", patterns: []string{"libamdhip64.so*"}, dirs: []string{"opt/rocm/lib"}},
	{name: "vulkan-loader", forEP: "WebGPU (Dawn's Vulkan backend)", patterns: []string{"libvulkan.so.1"}},
	{name: "ort-providers-shared", forEP: "every plugin EP (CUDA, TensorRT, OpenVINO, MIGraphX)", patterns: []string{"libonnxruntime_providers_shared.so"}, ortOnly: true},
	{name: "ort-provider-cuda", forEP: "CUDA", patterns: []string{"libonnxruntime_providers_cuda.so"}, ortOnly: true},
	{name: "ort-provider-tensorrt", forEP: "TensorRT", patterns: []string{"libonnxruntime_providers_tensorrt.so"}, ortOnly: true},
	{name: "ort-provider-openvino", forEP: "OpenVINO", patterns: []string{"libonnxruntime_providers_openvino.so"}, ortOnly: true},
	{name: "ort-provider-migraphx", forEP: "MIGraphX", patterns: []string{"libonnxruntime_providers_migraphx.so"}, ortOnly: true},
}

// parseLdconfig reads `ldconfig -p` output:
//
//	588 libs found in cache `/etc/ld.so.cache'
//		libvulkan.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libvulkan.so.1
//
// into basename → paths, in cache order.
func parseLdconfig(out string) map[string][]string {
	libs := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, " (")
		if !ok {
			continue
		}
		_, path, ok := strings.Cut(rest, "=> ")
		if !ok {
			continue
		}
		libs[name] = append(libs[name], strings.TrimSpace(path))
	}
	return libs
}

func runLdconfig(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var lastErr error
	for _, bin := range []string{"ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		out, err := exec.CommandContext(ctx, bin, "-p").Output()
		if err == nil {
			return string(out), nil
		}
		lastErr = err
	}
	return "", fmt.Errorf("ldconfig -p: %w", lastErr)
}

// librarySearch is where libraries are looked for, as the dynamic linker would.
type librarySearch struct {
	cache     map[string][]string
	cacheNote string // "ldconfig cache (588 entries)" or why there is none
	ldPath    []string
	ortDir    string
	root      string
}

func detectLibraries(ctx context.Context, e env, ort Probe) []Library {
	s := librarySearch{root: e.root}
	out, err := e.ldconfig(ctx)
	if err != nil {
		s.cacheNote = fmt.Sprintf("no ldconfig cache (%v)", err)
	} else {
		s.cache = parseLdconfig(out)
		s.cacheNote = fmt.Sprintf("ldconfig cache (%d names)", len(s.cache))
	}
	for _, d := range filepath.SplitList(e.getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			s.ldPath = append(s.ldPath, d)
		}
	}
	if lib, err := e.ortInit(); err == nil && lib.Path != "" {
		s.ortDir = filepath.Dir(lib.Path)
	}
	var libs []Library
	for _, w := range wantedLibraries {
		libs = append(libs, s.find(w))
	}
	return libs
}

func (s librarySearch) find(w wantedLibrary) Library {
	lib := Library{For: w.forEP}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			lib.Paths = append(lib.Paths, p)
		}
	}
	var looked []string
	if !w.ortOnly {
		looked = append(looked, s.cacheNote)
		var names []string
		for name := range s.cache {
			for _, pat := range w.patterns {
				if ok, _ := filepath.Match(pat, name); ok {
					names = append(names, name)
				}
			}
		}
		sort.Strings(names)
		for _, n := range names {
			for _, p := range s.cache[n] {
				add(p)
			}
		}
		if len(s.ldPath) > 0 {
			looked = append(looked, "LD_LIBRARY_PATH="+strings.Join(s.ldPath, ":"))
		} else {
			looked = append(looked, "LD_LIBRARY_PATH (unset)")
		}
		for _, d := range s.ldPath {
			for _, p := range globDir(d, w.patterns) {
				add(p)
			}
		}
		for _, d := range w.dirs {
			dir := join(s.root, d)
			looked = append(looked, dir)
			for _, p := range globDir(dir, w.patterns) {
				add(p)
			}
		}
	}
	if s.ortDir != "" {
		looked = append(looked, s.ortDir+" (ONNX Runtime's directory)")
		for _, p := range globDir(s.ortDir, w.patterns) {
			add(p)
		}
	} else if w.ortOnly {
		looked = append(looked, "ONNX Runtime's directory (unknown: ONNX Runtime did not load)")
	}
	pattern := strings.Join(w.patterns, " or ")
	if len(lib.Paths) == 0 {
		lib.Probe = missing(w.name, fmt.Sprintf("not found: no %s in %s", pattern, strings.Join(looked, ", ")))
		return lib
	}
	lib.Probe = found(w.name, strings.Join(lib.Paths, ", "))
	return lib
}

// globDir lists files in dir whose base name matches one of the patterns.
func globDir(dir string, patterns []string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		for _, pat := range patterns {
			if ok, _ := filepath.Match(pat, e.Name()); ok {
				out = append(out, filepath.Join(dir, e.Name()))
				break
			}
		}
	}
	return out
}
