/* Captures what NVML says of every GPU's NVLinks, for fabscope's probe tests (issue: NVLink state,
 * errors and traffic). Build and run on a GPU node:
 *
 *   cc -O1 -o nvml-capture scripts/device-nvml-capture.c -ldl && ./nvml-capture > nvml.json
 *
 * NVML is opened with dlopen (libnvidia-ml.so.1), as fabscope's probe does; its entry points are
 * declared here from NVML's documented C API, so no NVML header is needed. Every call is written
 * with its return code (0 success, 3 not supported, ...), so a replay knows what the driver
 * refused as well as what it answered. One JSON document on stdout; exit 0 even where NVML is
 * missing (the document says so).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void* dev_t_;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} pci_t;
typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
} field_t;

#define MAX_LINKS 18
static void* h;
#define SYM(name) dlsym(h, name)

static void str(const char* key, const char* v, int comma) {
  printf("\"%s\": \"", key);
  for (const char* p = v; *p; p++) {
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p < 0x20) continue;
    putchar(*p);
  }
  printf("\"%s", comma ? ", " : "");
}

int main(void) {
  h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) {
    printf("{\"capture\": \"fabscope.nvml-capture\", \"error\": \"libnvidia-ml.so.1: %s\"}\n", dlerror());
    return 0;
  }
  int (*init)(void) = (int (*)(void))SYM("nvmlInit_v2");
  int (*count)(unsigned*) = (int (*)(unsigned*))SYM("nvmlDeviceGetCount_v2");
  int (*handle)(unsigned, dev_t_*) = (int (*)(unsigned, dev_t_*))SYM("nvmlDeviceGetHandleByIndex_v2");
  int (*name)(dev_t_, char*, unsigned) = (int (*)(dev_t_, char*, unsigned))SYM("nvmlDeviceGetName");
  int (*pci)(dev_t_, pci_t*) = (int (*)(dev_t_, pci_t*))SYM("nvmlDeviceGetPciInfo_v3");
  int (*drv)(char*, unsigned) = (int (*)(char*, unsigned))SYM("nvmlSystemGetDriverVersion");
  int (*state)(dev_t_, unsigned, int*) = (int (*)(dev_t_, unsigned, int*))SYM("nvmlDeviceGetNvLinkState");
  int (*version)(dev_t_, unsigned, unsigned*) = (int (*)(dev_t_, unsigned, unsigned*))SYM("nvmlDeviceGetNvLinkVersion");
  int (*remote)(dev_t_, unsigned, pci_t*) = (int (*)(dev_t_, unsigned, pci_t*))SYM("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  int (*rtype)(dev_t_, unsigned, int*) = (int (*)(dev_t_, unsigned, int*))SYM("nvmlDeviceGetNvLinkRemoteDeviceType");
  int (*errc)(dev_t_, unsigned, int, unsigned long long*) =
      (int (*)(dev_t_, unsigned, int, unsigned long long*))SYM("nvmlDeviceGetNvLinkErrorCounter");
  int (*cap)(dev_t_, unsigned, int, unsigned*) = (int (*)(dev_t_, unsigned, int, unsigned*))SYM("nvmlDeviceGetNvLinkCapability");
  int (*fields)(dev_t_, int, field_t*) = (int (*)(dev_t_, int, field_t*))SYM("nvmlDeviceGetFieldValues");
  int (*p2p)(dev_t_, dev_t_, int, int*) = (int (*)(dev_t_, dev_t_, int, int*))SYM("nvmlDeviceGetP2PStatus");
  int (*ancestor)(dev_t_, dev_t_, int*) = (int (*)(dev_t_, dev_t_, int*))SYM("nvmlDeviceGetTopologyCommonAncestor");
  if (!init || !count || !handle) {
    printf("{\"capture\": \"fabscope.nvml-capture\", \"error\": \"entry points missing\"}\n");
    return 0;
  }
  int rc = init();
  unsigned n = 0;
  int rcc = rc == 0 ? count(&n) : -1;
  char dv[96] = "";
  int rcd = drv ? drv(dv, sizeof dv) : -1;
  printf("{\"capture\": \"fabscope.nvml-capture\", \"version\": 1, \"init\": %d, \"count_rc\": %d, \"count\": %u, ", rc, rcc, n);
  printf("\"driver_rc\": %d, ", rcd);
  str("driver", dv, 1);
  printf("\"gpus\": [");
  dev_t_ devs[64];
  if (n > 64) n = 64;
  for (unsigned i = 0; i < n; i++) {
    int rh = handle(i, &devs[i]);
    char nm[96] = "";
    pci_t pi;
    memset(&pi, 0, sizeof pi);
    int rn = rh == 0 && name ? name(devs[i], nm, sizeof nm) : -1;
    int rp = rh == 0 && pci ? pci(devs[i], &pi) : -1;
    printf("%s\n  {\"index\": %u, \"handle_rc\": %d, \"name_rc\": %d, ", i ? "," : "", i, rh, rn);
    str("name", nm, 1);
    printf("\"pci_rc\": %d, ", rp);
    str("bus_id", pi.busId, 1);
    printf("\"links\": [");
    for (unsigned l = 0; l < MAX_LINKS; l++) {
      int st = -1, rt = -1;
      unsigned ver = 0;
      pci_t rp2;
      memset(&rp2, 0, sizeof rp2);
      int r_st = rh == 0 && state ? state(devs[i], l, &st) : -1;
      int r_ver = rh == 0 && version ? version(devs[i], l, &ver) : -1;
      int r_rem = rh == 0 && remote ? remote(devs[i], l, &rp2) : -1;
      int r_rt = rh == 0 && rtype ? rtype(devs[i], l, &rt) : -1;
      printf("%s\n    {\"link\": %u, \"state_rc\": %d, \"state\": %d, \"version_rc\": %d, \"version\": %u, ", l ? "," : "", l,
             r_st, st, r_ver, ver);
      printf("\"remote_rc\": %d, ", r_rem);
      str("remote_bus_id", rp2.busId, 1);
      printf("\"remote_type_rc\": %d, \"remote_type\": %d, \"errors\": [", r_rt, rt);
      /* 0 replay, 1 recovery, 2 CRC flit, 3 CRC data, 4 ECC data */
      for (int e = 0; e < 5; e++) {
        unsigned long long v = 0;
        int r = rh == 0 && errc ? errc(devs[i], l, e, &v) : -1;
        printf("%s{\"counter\": %d, \"rc\": %d, \"value\": %llu}", e ? ", " : "", e, r, v);
      }
      printf("], \"capabilities\": [");
      for (int c = 0; c < 6; c++) {
        unsigned v = 0;
        int r = rh == 0 && cap ? cap(devs[i], l, c, &v) : -1;
        printf("%s{\"cap\": %d, \"rc\": %d, \"value\": %u}", c ? ", " : "", c, r, v);
      }
      printf("]}");
    }
    printf("],\n   \"fields\": [");
    /* NVLink field ids of nvml.h: 138-146 (throughput data/raw tx/rx, link count, ...), 160-171
     * (speed, state, version, ...): asked by number, each with its own return code. */
    static const unsigned ids[] = {90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 138, 139, 140, 141, 142, 143, 144, 145,
                                   146, 147, 148, 149, 150, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171};
    field_t fv[sizeof ids / sizeof ids[0]];
    memset(fv, 0, sizeof fv);
    for (unsigned k = 0; k < sizeof ids / sizeof ids[0]; k++) fv[k].fieldId = ids[k], fv[k].scopeId = 0xFFFFFFFFu;
    int rf = rh == 0 && fields ? fields(devs[i], (int)(sizeof ids / sizeof ids[0]), fv) : -1;
    for (unsigned k = 0; k < sizeof ids / sizeof ids[0]; k++)
      printf("%s{\"id\": %u, \"call_rc\": %d, \"rc\": %d, \"type\": %d, \"ull\": %llu}", k ? ", " : "", fv[k].fieldId, rf,
             fv[k].nvmlReturn, fv[k].valueType, fv[k].value.ull);
    printf("]}");
  }
  printf("],\n \"pairs\": [");
  int first = 1;
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < n; j++) {
      if (i == j) continue;
      int anc = -1, r_anc = ancestor ? ancestor(devs[i], devs[j], &anc) : -1;
      printf("%s\n  {\"a\": %u, \"b\": %u, \"ancestor_rc\": %d, \"ancestor\": %d, \"p2p\": [", first ? "" : ",", i, j, r_anc, anc);
      first = 0;
      for (int k = 0; k < 5; k++) { /* read, write, NVLink, atomics, prop */
        int s = -1, r = p2p ? p2p(devs[i], devs[j], k, &s) : -1;
        printf("%s{\"index\": %d, \"rc\": %d, \"status\": %d}", k ? ", " : "", k, r, s);
      }
      printf("]}");
    }
  printf("]}\n");
  return 0;
}
