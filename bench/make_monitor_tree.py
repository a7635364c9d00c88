#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a large recorded sysfs/procfs tree for measuring `parity monitor`'s cost per sample.

    bench/make_monitor_tree.py OUT [--gpus 8] [--sockets 2] [--cores 56] [--nvme 4] [--seed 1]

OUT/sys and OUT/proc are shaped as on an 8-GPU MI300X server (the shape of
tests/fixtures/monitor/mi300x) with a full host around it: two Xeon sockets with Hyper-Threading
(/proc/stat with every CPU, /proc/cpuinfo, /proc/meminfo), coretemp per socket, NVMe drives,
RAPL package and dram zones, and EDAC memory controllers with their DIMMs. Point the monitor at
it with --sysfs-root OUT/sys --procfs-root OUT/proc and time a number of samples; the files are
static, so every sample reads the same values. Python standard library only; the same --seed
gives the same tree.
"""
import argparse
import os
import random
import shutil
import sys

MI300X_SLOTS = ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
                "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"]
MEMINFO_KEYS = [
    "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached", "Active",
    "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)",
    "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Zswap", "Zswapped", "Dirty",
    "Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable",
    "SUnreclaim", "KernelStack", "PageTables", "SecPageTables", "NFS_Unstable", "Bounce",
    "WritebackTmp", "CommitLimit", "Committed_AS", "VmallocTotal", "VmallocUsed",
    "VmallocChunk", "Percpu", "HardwareCorrupted", "AnonHugePages", "ShmemHugePages",
    "ShmemPmdMapped", "FileHugePages", "FilePmdMapped", "CmaTotal", "CmaFree", "Unaccepted",
    "HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp", "Hugepagesize",
    "Hugetlb", "DirectMap4k", "DirectMap2M", "DirectMap1G",
]
XEON_FLAGS = (
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi "
    "mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon "
    "pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq "
    "dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 "
    "x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm "
    "3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 intel_ppin cdp_l2 ssbd mba ibrs ibpb "
    "stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 "
    "smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt "
    "clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc "
    "cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect user_shstk avx_vnni "
    "avx512_bf16 wbnoinvd dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req vnmi "
    "avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni "
    "avx512_bitalg tme avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b "
    "enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr ibt amx_bf16 avx512_fp16 "
    "amx_tile amx_int8 flush_l1d arch_capabilities")


class Tree:
    def __init__(self, root):
        self.root = root
        self.files = 0

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="") as f:
            f.write(text)
        self.files += 1

    def values(self, rel_dir, mapping):
        for name, value in mapping.items():
            self.write(rel_dir + "/" + name, value if isinstance(value, str) else "%d\n" % value)


def dpm(levels, current):
    # amdgpu prints "%d: %uMhz %s\n" with "*" on the current level and "" elsewhere
    return "".join("%d: %dMhz %s\n" % (i, mhz, "*" if i == current else "")
                   for i, mhz in enumerate(levels))


def pci_uevent(driver, cls, vid, did, svid, sdid, slot):
    return ("DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\n"
            "PCI_SLOT_NAME=%s\nMODALIAS=pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n" %
            (driver, cls, vid, did, svid, sdid, slot, vid, did, svid, sdid,
             cls >> 16, (cls >> 8) & 0xff, cls & 0xff))


def drm_minor(tree, name, minor):
    tree.write("sys/class/drm/%s/dev" % name, "226:%d\n" % minor)
    tree.write("sys/class/drm/%s/uevent" % name,
               "MAJOR=226\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n" % (minor, name))


def slot_of(i):
    if i < len(MI300X_SLOTS):
        return MI300X_SLOTS[i]
    # beyond eight, further PCI domains with the same bus numbers
    return "%04x:%s" % (i // len(MI300X_SLOTS), MI300X_SLOTS[i % len(MI300X_SLOTS)][5:])


def gpus(tree, count, first_hwmon, rng):
    tree.write("sys/class/drm/version", "drm 1.1.0 20060810\n")
    # card0: the BMC's VGA (Matrox G200eW3 on Dell servers), which the AMD reader must skip
    drm_minor(tree, "card0", 0)
    bmc = "sys/class/drm/card0/device"
    tree.values(bmc, {"vendor": "0x102b\n", "device": "0x0536\n", "class": "0x030000\n",
                      "uevent": pci_uevent("mgag200", 0x030000, 0x102B, 0x0536, 0x1028, 0x0B1F,
                                           "0000:03:00.0")})
    tree.values("sys/class/drm/card0-VGA-1", {"status": "connected\n", "enabled": "enabled\n",
                                              "dpms": "On\n", "modes": "1024x768\n800x600\n"})
    ras_blocks = ("umc", "gfx", "sdma", "mmhub", "xgmi_wafl", "pcie_bif", "hdp")
    for i in range(count):
        card, minor = "card%d" % (i + 1), i + 1
        slot = slot_of(i)
        drm_minor(tree, card, minor)
        dev = "sys/class/drm/%s/device" % card
        uevent = pci_uevent("amdgpu", 0x120000, 0x1002, 0x74A1, 0x1002, 0x74A1, slot)
        busy = rng.randint(60, 100)
        tree.values(dev, {
            "vendor": "0x1002\n", "device": "0x74a1\n", "subsystem_vendor": "0x1002\n",
            "subsystem_device": "0x74a1\n", "class": "0x120000\n", "revision": "0x00\n",
            "uevent": uevent, "numa_node": "%d\n" % (i * 2 // max(count, 1)),
            "product_name": "AMD Instinct MI300X OAM\n", "product_number": "102-G30211-0C\n",
            "serial_number": "6923510%05d\n" % rng.randint(0, 99999),
            "unique_id": "%016x\n" % rng.getrandbits(64),
            "vbios_version": "113-M3000100-102\n",
            "current_compute_partition": "SPX\n", "current_memory_partition": "NPS1\n",
            "gpu_busy_percent": busy, "mem_busy_percent": rng.randint(10, 60),
            "mem_info_vram_total": 205822885888,
            "mem_info_vram_used": rng.randint(150, 195) * 1024 ** 3 + rng.randint(0, 1 << 20) * 4096,
            "mem_info_vis_vram_total": 205822885888,
            "mem_info_vis_vram_used": rng.randint(1, 190) * 1024 ** 3,
            "mem_info_gtt_total": 811522125824, "mem_info_gtt_used": rng.randint(10, 90) << 20,
            "pp_dpm_sclk": dpm([500, rng.randint(1300, 2099), 2100], 1),
            "pp_dpm_mclk": dpm([900, 1100, 1200, 1300], 3),
            "pp_dpm_fclk": dpm([1200, 1400, 1600, 1900, 2000], rng.randint(0, 4)),
            "pp_dpm_socclk": dpm([28, 1143], 1),
            "power_dpm_force_performance_level": "auto\n",
            "pcie_replay_count": rng.choice([0, 0, 0, 1, 3]),
            "current_link_speed": "32.0 GT/s PCIe\n", "current_link_width": "16\n",
            "max_link_speed": "32.0 GT/s PCIe\n", "max_link_width": "16\n",
        })
        ras = dev + "/ras"
        tree.write(ras + "/features", "feature mask: 0x%x\n" % 0xef)
        for block in ras_blocks:
            ce = rng.choice([0, 0, 0, rng.randint(1, 9)])
            text = "ue: 0\nce: %d\n" % ce
            if block == "umc":
                text += "de: 0\n"
            tree.write(ras + "/%s_err_count" % block, text)
        pages = "".join("0x%08x : 0x00001000 : R\n" % rng.getrandbits(28)
                        for _ in range(rng.choice([0, 0, 0, 1, 2])))
        tree.write(ras + "/gpu_vram_bad_pages", pages)
        hw = {
            "name": "amdgpu\n",
            "temp2_input": rng.randint(45, 80) * 1000, "temp2_label": "junction\n",
            "temp2_crit": 100000, "temp2_crit_hyst": "-273150\n", "temp2_emergency": 105000,
            "temp3_input": rng.randint(40, 70) * 1000, "temp3_label": "mem\n",
            "temp3_crit": 95000, "temp3_crit_hyst": "-273150\n", "temp3_emergency": 105000,
            "power1_input": rng.randint(300, 740) * 1000000, "power1_label": "PPT\n",
            "power1_cap": 750000000, "power1_cap_max": 750000000, "power1_cap_min": 0,
            "power1_cap_default": 750000000,
            "freq1_input": rng.randint(1300, 2100) * 1000000, "freq1_label": "sclk\n",
        }
        index = first_hwmon + i
        tree.values("%s/hwmon/hwmon%d" % (dev, index), hw)
        tree.values("sys/class/hwmon/hwmon%d" % index, hw)  # /sys/class/hwmon lists it too
        render = "renderD%d" % (128 + i)
        drm_minor(tree, render, 128 + i)
        tree.values("sys/class/drm/%s/device" % render,
                    {"vendor": "0x1002\n", "device": "0x74a1\n", "uevent": uevent})


def proc_stat(ncpu, uptime_s, rng):
    rows = []
    for _ in range(ncpu):
        total = int(uptime_s * 100 * rng.uniform(0.995, 1.0))
        share = rng.uniform(0.2, 0.7)
        user, nice, system = int(total * share * 0.85), int(total * share * 0.004), int(total * share * 0.12)
        irq, softirq = int(total * share * 0.005), int(total * share * 0.01)
        iowait = int(total * rng.uniform(0.0005, 0.003))
        idle = total - user - nice - system - irq - softirq - iowait
        rows.append([user, nice, system, idle, iowait, irq, softirq, 0, 0, 0])
    lines = ["cpu  " + " ".join(str(sum(r[k] for r in rows)) for k in range(10))]
    lines += ["cpu%d " % i + " ".join(map(str, r)) for i, r in enumerate(rows)]
    irqs = [rng.randint(0, 50_000_000) if rng.random() < 0.3 else 0 for _ in range(256 + 4 * ncpu)]
    lines.append("intr %d " % sum(irqs) + " ".join(map(str, irqs)))
    lines.append("ctxt %d" % int(uptime_s * ncpu * 1400))
    lines.append("btime 1718000000")
    lines.append("processes %d" % int(uptime_s * 6))
    lines.append("procs_running %d" % rng.randint(4, ncpu // 2))
    lines.append("procs_blocked 0")
    soft = [0] + [rng.randint(0, 10 ** 9) for _ in range(9)]
    lines.append("softirq %d " % sum(soft) + " ".join(map(str, soft)))
    return "\n".join(lines) + "\n"


def meminfo(total_kb, ncpu, rng):
    free = int(total_kb * 0.35)
    cached = int(total_kb * 0.25)
    anon = int(total_kb * 0.3)
    sreclaim, sunreclaim = int(total_kb * 0.01), int(total_kb * 0.004)
    v = dict.fromkeys(MEMINFO_KEYS, 0)
    v.update({
        "MemTotal": total_kb, "MemFree": free, "MemAvailable": free + int(cached * 0.9) + sreclaim,
        "Buffers": int(total_kb * 0.003), "Cached": cached, "Active": anon + cached // 2,
        "Inactive": cached // 2, "Active(anon)": anon, "Active(file)": cached // 2,
        "Inactive(file)": cached // 2, "Unevictable": 30720, "Mlocked": 27648,
        "AnonPages": anon, "Mapped": cached // 14, "Shmem": cached // 30,
        "KReclaimable": sreclaim, "Slab": sreclaim + sunreclaim, "SReclaimable": sreclaim,
        "SUnreclaim": sunreclaim, "KernelStack": ncpu * 230, "PageTables": anon // 250,
        "CommitLimit": total_kb // 2, "Committed_AS": int(anon * 1.4),
        "VmallocTotal": 13743895347199, "VmallocUsed": 600000, "Percpu": ncpu * 1728,
        "AnonHugePages": anon // 2 // 2048 * 2048, "Hugepagesize": 2048,
        "DirectMap4k": 2_000_000 + rng.randint(0, 500_000), "DirectMap2M": 80_000_000,
    })
    v["DirectMap1G"] = max(0, (total_kb - v["DirectMap2M"]) // 1048576 * 1048576)
    out = []
    for key in MEMINFO_KEYS:
        label = key + ":"
        if key.startswith("HugePages_"):
            out.append("%-16s%8d\n" % (label, v[key]))
        elif key == "HardwareCorrupted":
            out.append("%s %5d kB\n" % (label, v[key]))
        else:
            out.append("%-16s%8d kB\n" % (label, v[key]))
    return "".join(out)


def cpuinfo(sockets, cores, rng):
    stanzas = []
    n = 0
    for thread in range(2):
        for s in range(sockets):
            for c in range(cores):
                stanzas.append("\n".join([
                    "processor\t: %d" % n, "vendor_id\t: GenuineIntel", "cpu family\t: 6",
                    "model\t\t: 143",
                    "model name\t: Intel(R) Xeon(R) Platinum 8480+", "stepping\t: 8",
                    "microcode\t: 0x2b0004d0", "cpu MHz\t\t: %.3f" % rng.uniform(800, 3800),
                    "cache size\t: 107520 KB", "physical id\t: %d" % s,
                    "siblings\t: %d" % (2 * cores), "core id\t\t: %d" % c,
                    "cpu cores\t: %d" % cores, "apicid\t\t: %d" % (s * 128 + c * 2 + thread),
                    "initial apicid\t: %d" % (s * 128 + c * 2 + thread), "fpu\t\t: yes",
                    "fpu_exception\t: yes", "cpuid level\t: 32", "wp\t\t: yes",
                    "flags\t\t: " + XEON_FLAGS,
                    "bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs eibrs_pbrsb bhi",
                    "bogomips\t: 4000.00", "clflush size\t: 64", "cache_alignment\t: 64",
                    "address sizes\t: 46 bits physical, 57 bits virtual", "power management:",
                ]) + "\n")
                n += 1
    return "\n".join(stanzas) + "\n", n


def host(tree, sockets, cores, nvme, rng):
    text, ncpu = cpuinfo(sockets, cores, rng)
    tree.write("proc/cpuinfo", text)
    tree.write("proc/stat", proc_stat(ncpu, 864_000, rng))
    tree.write("proc/meminfo", meminfo(2_113_280_000 * sockets // 2, ncpu, rng))
    hwmon = 0
    for s in range(sockets):  # coretemp: temp1 the package, temp2.. the cores (kernel >= 6.5)
        files = {"name": "coretemp\n", "temp1_input": rng.randint(55, 75) * 1000,
                 "temp1_label": "Package id %d\n" % s, "temp1_max": 89000, "temp1_crit": 99000,
                 "temp1_crit_alarm": 0}
        for c in range(cores):
            i = c + 2
            files.update({"temp%d_input" % i: rng.randint(40, 75) * 1000,
                          "temp%d_label" % i: "Core %d\n" % c, "temp%d_max" % i: 89000,
                          "temp%d_crit" % i: 99000, "temp%d_crit_alarm" % i: 0})
        tree.values("sys/class/hwmon/hwmon%d" % hwmon, files)
        hwmon += 1
    for _ in range(nvme):
        tree.values("sys/class/hwmon/hwmon%d" % hwmon, {
            "name": "nvme\n", "temp1_input": rng.randint(30, 50) * 1000 - 150,
            "temp1_label": "Composite\n", "temp1_max": 81850, "temp1_min": -273150,
            "temp1_crit": 84850, "temp1_alarm": 0,
            "temp2_input": rng.randint(30, 55) * 1000 - 150, "temp2_label": "Sensor 1\n",
            "temp2_max": 65261850, "temp2_min": -273150})
        hwmon += 1
    base = "sys/class/powercap"
    tree.values(base + "/intel-rapl", {"enabled": "1\n", "uevent": ""})
    for s in range(sockets):
        tree.values(base + "/intel-rapl:%d" % s, {
            "name": "package-%d\n" % s, "enabled": "1\n", "uevent": "",
            "energy_uj": rng.randint(10 ** 9, 262143328850 - 10 ** 9),
            "max_energy_range_uj": 262143328850,
            "constraint_0_name": "long_term\n", "constraint_0_power_limit_uw": 350000000,
            "constraint_0_time_window_us": 999424, "constraint_0_max_power_uw": 350000000,
            "constraint_1_name": "short_term\n", "constraint_1_power_limit_uw": 420000000,
            "constraint_1_time_window_us": 2440, "constraint_1_max_power_uw": 0})
        tree.values(base + "/intel-rapl:%d:0" % s, {
            "name": "dram\n", "enabled": "1\n", "uevent": "",
            "energy_uj": rng.randint(10 ** 8, 65712999613 - 10 ** 9),
            "max_energy_range_uj": 65712999613,
            "constraint_0_name": "long_term\n", "constraint_0_power_limit_uw": 0,
            "constraint_0_time_window_us": 976})
    edac = "sys/devices/system/edac/mc"
    tree.write(edac + "/uevent", "")
    for s in range(sockets):  # i10nm_edac: four memory controllers per socket, two channels each
        for imc in range(4):
            mc = "%s/mc%d" % (edac, s * 4 + imc)
            ce = rng.choice([0, 0, 0, rng.randint(1, 20)])
            tree.values(mc, {"mc_name": "Intel_10nm Socket#%d IMC#%d\n" % (s, imc),
                             "ce_count": ce, "ue_count": 0, "ce_noinfo_count": 0,
                             "ue_noinfo_count": 0, "size_mb": 131072,
                             "seconds_since_reset": 863990, "max_location": "memory 3 \n"})
            for ch in range(2):
                tree.values("%s/dimm%d" % (mc, ch * 2), {
                    "dimm_label": "CPU_SrcID#%d_MC#%d_Chan#%d_DIMM#0\n" % (s, imc, ch),
                    "dimm_location": "channel %d slot 0 \n" % ch, "size": 65536,
                    "dimm_mem_type": "Registered-DDR5\n", "dimm_dev_type": "x4\n",
                    "dimm_edac_mode": "S8ECD8ED\n", "dimm_ce_count": ce if ch == 0 else 0,
                    "dimm_ue_count": 0})
    return hwmon


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", metavar="OUT", help="directory to write (its sys/ and proc/ are replaced)")
    parser.add_argument("--gpus", type=int, default=8, help="MI300X GPUs (default 8)")
    parser.add_argument("--sockets", type=int, default=2, help="CPU sockets (default 2)")
    parser.add_argument("--cores", type=int, default=56, help="cores per socket, 2 threads each (default 56)")
    parser.add_argument("--nvme", type=int, default=4, help="NVMe drives (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args()
    if args.gpus < 0 or args.sockets < 1 or args.cores < 1 or args.nvme < 0:
        parser.error("--gpus and --nvme must be >= 0, --sockets and --cores >= 1")
    for sub in ("sys", "proc"):
        shutil.rmtree(os.path.join(args.out, sub), ignore_errors=True)
    tree = Tree(args.out)
    rng = random.Random(args.seed)
    first_gpu_hwmon = host(tree, args.sockets, args.cores, args.nvme, rng)
    gpus(tree, args.gpus, first_gpu_hwmon, rng)
    print("%s: %d GPUs, %d CPUs, %d files" % (args.out, args.gpus, 2 * args.sockets * args.cores,
                                             tree.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
