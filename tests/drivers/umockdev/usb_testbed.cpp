#include "tests/drivers/umockdev/usb_testbed.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <umockdev.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sonoflow::drivers::test {
namespace {

using usb::TransferStatus;

constexpr std::uint32_t kCapabilities = USBDEVFS_CAP_ZERO_PACKET | USBDEVFS_CAP_BULK_CONTINUATION |
                                        USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
                                        USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
constexpr int kUsbSpeedHigh = 3;  // enum usb_device_speed

// URB status as the kernel reports it (negative errno).
int urb_status(TransferStatus s) {
  switch (s) {
    case TransferStatus::Ok: return 0;
    case TransferStatus::Stall: return -EPIPE;
    case TransferStatus::NoDevice: return -ESHUTDOWN;
    case TransferStatus::Overflow: return -EOVERFLOW;
    case TransferStatus::Cancelled: return -ECONNRESET;
    case TransferStatus::Timeout: return -ETIMEDOUT;
    default: return -EPROTO;
  }
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  char b[3];
  for (std::uint8_t v : bytes) {
    std::snprintf(b, sizeof b, "%02X", v);
    s += b;
  }
  return s;
}

// One URB the client submitted: our local copy of its struct usbdevfs_urb and of its buffer
// (umockdev writes the changed bytes of both back when the URB is reaped).
struct Urb {
  UMockdevIoctlData* urb = nullptr;
  UMockdevIoctlData* buf = nullptr;
  usbdevfs_urb* u() const { return reinterpret_cast<usbdevfs_urb*>(urb->data); }
  std::span<std::uint8_t> buffer() const {
    return buf ? std::span<std::uint8_t>(buf->data, std::size_t(buf->data_len)) : std::span<std::uint8_t>{};
  }
  void release() {
    if (buf) g_object_unref(buf);
    if (urb) g_object_unref(urb);
    buf = urb = nullptr;
  }
};

// The handler type: a UMockdevIoctlBase subclass whose instances point back at the harness.
struct Handler {
  UMockdevIoctlBase parent;
  UsbTestbed::Impl* owner;
};
struct HandlerClass {
  UMockdevIoctlBaseClass parent_class;
};

}  // namespace

struct UsbTestbed::Impl {
  struct Port {
    int number = 0;
    int devnum = 0;
    std::string devnode, syspath;
    emulator::UsbDevice* device = nullptr;
    std::deque<Urb> pending_in, pending_out, done;
    bool disconnected = false;
    int master_fd = -1, slave_fd = -1;
    bool ready = false;
    pid_t guard = 0;
    std::uint64_t in_flight = 0;
  };

  UMockdevTestbed* testbed = nullptr;
  Handler* handler = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<Port>> ports;      // every port ever plugged (late reaps)
  std::map<std::string, Port*> by_devnode;
  std::array<Port*, 9> current{};
  int next_devnum = 2;
  UsbfsCounters counters;
  std::atomic<bool> running{true};
  std::thread service;

  gboolean handle_ioctl(UMockdevIoctlClient* client);
  void finish(Port& p, Urb& x, int status, std::size_t actual);
  void service_in(Port& p);
  void update_ready(Port& p);
  void service_loop(unsigned period_us);
};

namespace {

gboolean handler_handle_ioctl(UMockdevIoctlBase* self, UMockdevIoctlClient* client) {
  return reinterpret_cast<Handler*>(self)->owner->handle_ioctl(client);
}

void handler_class_init(gpointer klass, gpointer) {
  reinterpret_cast<UMockdevIoctlBaseClass*>(klass)->handle_ioctl = handler_handle_ioctl;
}

GType handler_type() {
  static const GType type = g_type_register_static_simple(
      UMOCKDEV_TYPE_IOCTL_BASE, "SonoflowUsbfsHandler", sizeof(HandlerClass), handler_class_init,
      sizeof(Handler), nullptr, GTypeFlags(0));
  return type;
}

}  // namespace

// Completion: status and length go into our copy of the URB; the client learns of it when it
// reaps (and, through the pty, that there is something to reap).
void UsbTestbed::Impl::finish(Port& p, Urb& x, int status, std::size_t actual) {
  x.u()->status = status;
  x.u()->actual_length = int(actual);
  p.done.push_back(x);
}

// Gives every waiting IN URB whatever its endpoint has ready now.
void UsbTestbed::Impl::service_in(Port& p) {
  for (auto it = p.pending_in.begin(); it != p.pending_in.end();) {
    Urb x = *it;
    const emulator::TransferResult r =
        p.device->transfer_in(x.u()->endpoint, x.buffer().first(std::size_t(x.u()->buffer_length)));
    if (r.status == TransferStatus::Nak) {
      ++it;
      continue;
    }
    it = p.pending_in.erase(it);
    if (r.status == TransferStatus::Ok) ++counters.in_urbs_completed;
    finish(p, x, urb_status(r.status), r.bytes);
  }
  for (auto it = p.pending_out.begin(); it != p.pending_out.end();) {
    Urb x = *it;
    const emulator::TransferResult r =
        p.device->transfer_out(x.u()->endpoint, x.buffer().first(std::size_t(x.u()->buffer_length)));
    if (r.status == TransferStatus::Nak) {
      ++it;
      continue;
    }
    it = p.pending_out.erase(it);
    finish(p, x, urb_status(r.status), r.status == TransferStatus::Ok ? r.bytes : 0);
  }
}

// POLLOUT on the client's node <=> a completed URB waits to be reaped (as usbfs does): the pty
// is stopped (no write room, no POLLOUT) while nothing is done.
void UsbTestbed::Impl::update_ready(Port& p) {
  const bool want = !p.done.empty();
  if (p.slave_fd < 0 || p.disconnected || want == p.ready) return;
  if (tcflow(p.slave_fd, want ? TCOON : TCOOFF) == 0) p.ready = want;
}

// Runs in umockdev's worker thread, one ioctl at a time per open node.
gboolean UsbTestbed::Impl::handle_ioctl(UMockdevIoctlClient* client) {
  UMockdevIoctlData* arg = umockdev_ioctl_client_get_arg(client);  // the raw ioctl argument
  const gulong request = umockdev_ioctl_client_get_request(client);
  const bool reap = request == USBDEVFS_REAPURB || request == USBDEVFS_REAPURBNDELAY;
  const std::size_t size = _IOC_SIZE(request);
  UMockdevIoctlData* data = nullptr;  // the argument struct, copied from the client
  // Each resolve is a round trip to the client: skip it on the frequent "nothing to reap".
  if (size > 0 && !reap && !(data = umockdev_ioctl_data_resolve(arg, 0, size, nullptr))) {
    umockdev_ioctl_client_complete(client, -1, EFAULT);
    return TRUE;
  }
  long result = 0;
  int error = 0;
  {
    std::lock_guard lock(mutex);
    ++counters.ioctls;
    auto found = by_devnode.find(umockdev_ioctl_client_get_devnode(client));
    Port* p = found == by_devnode.end() ? nullptr : found->second;
    if (p == nullptr || (p->disconnected && !reap && request != USBDEVFS_DISCARDURB)) {
      result = -1;
      error = ENODEV;
    } else {
      switch (request) {
        case USBDEVFS_GET_CAPABILITIES:
          std::memcpy(data->data, &kCapabilities, sizeof kCapabilities);
          break;
        case USBDEVFS_CLAIMINTERFACE:
        case USBDEVFS_RELEASEINTERFACE:
        case USBDEVFS_SETINTERFACE:
        case USBDEVFS_SETCONFIGURATION:
        case USBDEVFS_RESETEP:
        case USBDEVFS_RESET:
        case USBDEVFS_DISCONNECT_CLAIM:
          break;
        case USBDEVFS_CLEAR_HALT: {
          unsigned int endpoint = 0;
          std::memcpy(&endpoint, data->data, sizeof endpoint);
          p->device->clear_halt(std::uint8_t(endpoint));
          break;
        }
        case USBDEVFS_GETDRIVER:
        case USBDEVFS_IOCTL:  // no kernel driver is bound to a vendor-class interface
          result = -1;
          error = ENODATA;
          break;
        case USBDEVFS_GET_SPEED:
          result = kUsbSpeedHigh;
          break;
        case USBDEVFS_CONTROL: {  // synchronous control (libusb uses URBs when it has sysfs)
          auto* c = reinterpret_cast<usbdevfs_ctrltransfer*>(data->data);
          UMockdevIoctlData* stage =
              c->wLength ? umockdev_ioctl_data_resolve(data, offsetof(usbdevfs_ctrltransfer, data),
                                                       c->wLength, nullptr)
                         : nullptr;
          const usb::SetupPacket setup{c->bRequestType, c->bRequest, c->wValue, c->wIndex, c->wLength};
          const emulator::TransferResult r = p->device->control(
              setup, stage ? std::span<std::uint8_t>(stage->data, c->wLength) : std::span<std::uint8_t>{});
          ++counters.control_urbs;
          if (r.status == TransferStatus::Ok) {
            result = long(r.bytes);
          } else {
            result = -1;
            error = -urb_status(r.status);
          }
          if (stage) g_object_unref(stage);
          break;
        }
        case USBDEVFS_SUBMITURB: {
          auto* u = reinterpret_cast<usbdevfs_urb*>(data->data);
          Urb x;
          x.urb = UMOCKDEV_IOCTL_DATA(g_object_ref(data));
          if (u->buffer_length > 0)  // our copy of the client's buffer
            x.buf = umockdev_ioctl_data_resolve(data, offsetof(usbdevfs_urb, buffer),
                                                std::size_t(u->buffer_length), nullptr);
          if (u->buffer_length > 0 && x.buf == nullptr) {
            x.release();
            result = -1;
            error = EFAULT;
            break;
          }
          ++counters.urbs_submitted;
          ++p->in_flight;
          counters.max_in_flight = std::max(counters.max_in_flight, p->in_flight);
          if (u->type == USBDEVFS_URB_TYPE_CONTROL) {  // buffer: 8-byte setup, then data stage
            const std::span<std::uint8_t> b = x.buffer();
            if (b.size() < 8) {
              finish(*p, x, -EPIPE, 0);
              break;
            }
            const usb::SetupPacket setup{b[0], b[1], std::uint16_t(b[2] | b[3] << 8),
                                         std::uint16_t(b[4] | b[5] << 8),
                                         std::uint16_t(b[6] | b[7] << 8)};
            const emulator::TransferResult r = p->device->control(setup, b.subspan(8));
            ++counters.control_urbs;
            finish(*p, x, urb_status(r.status), r.status == TransferStatus::Ok ? r.bytes : 0);
          } else if (u->type == USBDEVFS_URB_TYPE_BULK || u->type == USBDEVFS_URB_TYPE_INTERRUPT) {
            if (usb::is_in_endpoint(u->endpoint)) {
              p->pending_in.push_back(x);
            } else {
              ++counters.out_urbs;
              p->pending_out.push_back(x);
            }
            service_in(*p);
          } else {  // isochronous: neither device uses it
            --p->in_flight;
            x.release();
            result = -1;
            error = EINVAL;
          }
          break;
        }
        case USBDEVFS_DISCARDURB: {  // the raw argument is the client's URB address
          gulong address = 0;
          std::memcpy(&address, arg->data, sizeof address);
          bool found_urb = false;
          for (auto* queue : {&p->pending_in, &p->pending_out}) {
            for (auto it = queue->begin(); it != queue->end() && !found_urb; ++it) {
              if (it->urb->client_addr != address) continue;
              Urb x = *it;
              queue->erase(it);
              finish(*p, x, -ECONNRESET, 0);
              ++counters.urbs_discarded;
              found_urb = true;
              break;
            }
          }
          if (!found_urb) {  // already completed: the client reaps it normally
            result = -1;
            error = EINVAL;
          }
          break;
        }
        case USBDEVFS_REAPURB:  // libusb uses only NDELAY; blocking reap is served the same way
        case USBDEVFS_REAPURBNDELAY: {
          if (p->done.empty()) {
            result = -1;
            error = p->disconnected ? ENODEV : EAGAIN;
            break;
          }
          data = umockdev_ioctl_data_resolve(arg, 0, sizeof(void*), nullptr);
          if (data == nullptr) {  // the client went away mid-call
            result = -1;
            error = EFAULT;
            break;
          }
          Urb x = p->done.front();
          p->done.pop_front();
          // *arg = the client's own URB; our modified copy (status, length, IN data) is
          // written back to it on completion.
          umockdev_ioctl_data_set_ptr(data, 0, x.urb);
          x.release();
          --p->in_flight;
          ++counters.urbs_reaped;
          break;
        }
        default:
          result = -1;
          error = ENOTTY;
      }
      update_ready(*p);
    }
  }
  if (data) g_object_unref(data);
  umockdev_ioctl_client_complete(client, result, error);
  return TRUE;
}

void UsbTestbed::Impl::service_loop(unsigned period_us) {
  while (running.load(std::memory_order_acquire)) {
    {
      std::lock_guard lock(mutex);
      for (Port* p : current) {
        if (p == nullptr || p->disconnected) continue;
        p->device->advance();
        service_in(*p);
        update_ready(*p);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(period_us));
  }
}

// ---------------------------------------------------------------------------------------------

bool UsbTestbed::preloaded() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "libumockdev-preload") != nullptr;
}

bool UsbTestbed::ensure_preloaded(int argc, char** argv) {
  if (preloaded()) return true;
  // umockdev's ioctl sockets live under $TMPDIR and must fit in sun_path (108 bytes).
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && std::strlen(tmp) > 40) setenv("TMPDIR", "/tmp", 1);
  // An ASan build would refuse to start with the preload ahead of its runtime.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string asan_options = asan ? asan : "";
  if (asan_options.find("verify_asan_link_order") == std::string::npos) {
    asan_options += (asan_options.empty() ? "" : ":") + std::string("verify_asan_link_order=0");
    setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>("umockdev-wrapper"));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "usb_testbed: cannot run umockdev-wrapper: %s\n", std::strerror(errno));
  return false;
}

UsbTestbed::UsbTestbed(unsigned service_period_us) : impl_(std::make_unique<Impl>()) {
  if (!preloaded()) throw std::runtime_error("UsbTestbed needs the umockdev preload");
  impl_->testbed = umockdev_testbed_new();  // sets $UMOCKDEV_DIR for this process
  impl_->handler = reinterpret_cast<Handler*>(g_object_new(handler_type(), nullptr));
  impl_->handler->owner = impl_.get();
  impl_->service = std::thread([this, service_period_us] { impl_->service_loop(service_period_us); });
}

UsbTestbed::~UsbTestbed() {
  impl_->running.store(false, std::memory_order_release);
  impl_->service.join();
  for (int port = 1; port < int(impl_->current.size()); ++port)
    if (impl_->current[std::size_t(port)] != nullptr) unplug(port);
  g_object_unref(impl_->testbed);  // stops the worker thread and deletes $UMOCKDEV_DIR
  g_object_unref(impl_->handler);
  for (auto& p : impl_->ports) {
    for (auto* queue : {&p->pending_in, &p->pending_out, &p->done})
      for (Urb& x : *queue) x.release();
    if (p->slave_fd >= 0) ::close(p->slave_fd);
    if (p->master_fd >= 0) ::close(p->master_fd);
  }
}

void UsbTestbed::plug(int port, emulator::UsbDevice& device) {
  if (port < 1 || port >= int(impl_->current.size()) || impl_->current[std::size_t(port)])
    throw std::invalid_argument("port in use or out of range");
  auto owned = std::make_unique<Impl::Port>();
  Impl::Port* p = owned.get();
  p->number = port;
  p->devnum = impl_->next_devnum++;
  char node[64];
  std::snprintf(node, sizeof node, "/dev/bus/usb/001/%03d", p->devnum);
  p->devnode = node;
  p->syspath = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-" + std::to_string(port);
  p->device = &device;
  const emulator::DeviceIdentity& id = device.identity();

  // Order matters: a hot-plug driven client opens the node as soon as the "add" uevent
  // arrives, so the ioctl handler and the node come first, the sysfs record last.
  GError* error = nullptr;
  if (!umockdev_testbed_attach_ioctl(impl_->testbed, p->devnode.c_str(),
                                     UMOCKDEV_IOCTL_BASE(impl_->handler), &error))
    throw std::runtime_error(std::string("attach_ioctl: ") + error->message);
  gchar* root = umockdev_testbed_get_root_dir(impl_->testbed);
  const std::string path = std::string(root) + p->devnode;
  g_free(root);
  gchar* dir = g_path_get_dirname(path.c_str());
  g_mkdir_with_parents(dir, 0755);
  g_free(dir);
  char pts[128];
  int slave = -1;
  if (openpty(&p->master_fd, &slave, pts, nullptr, nullptr) != 0)
    throw std::runtime_error("openpty failed");
  termios t;
  tcgetattr(slave, &t);
  cfmakeraw(&t);
  tcsetattr(slave, TCSANOW, &t);
  p->slave_fd = slave;
  tcflow(slave, TCOOFF);  // nothing to reap yet: no POLLOUT
  // libusb opens the node without O_NOCTTY: if this process were a session leader without a
  // terminal it would adopt the pty and get SIGHUP at unplug. A throw-away process takes the
  // pty as its controlling terminal first (raw syscalls only: we are threaded and preloaded).
  p->guard = fork();
  if (p->guard == 0) {
    syscall(SYS_close, p->master_fd);
    syscall(SYS_setsid);
    syscall(SYS_ioctl, slave, TIOCSCTTY, 0);
    pause();  // until SIGHUP at unplug
    _exit(0);
  }
  if (symlink(pts, path.c_str()) != 0) throw std::runtime_error("symlink failed");
  {
    std::lock_guard lock(impl_->mutex);
    impl_->by_devnode[p->devnode] = p;
    impl_->current[std::size_t(port)] = p;
    impl_->ports.push_back(std::move(owned));
  }
  char record[4096];
  const int minor = p->devnum - 1;
  std::snprintf(record, sizeof record,
                "P: %s\n"
                "E: DEVNAME=%s\nE: DEVTYPE=usb_device\nE: DRIVER=usb\nE: PRODUCT=%x/%x/%x\n"
                "E: TYPE=0/0/0\nE: BUSNUM=001\nE: DEVNUM=%03d\nE: MAJOR=189\nE: MINOR=%d\n"
                "E: SUBSYSTEM=usb\n"
                "A: busnum=1\nA: devnum=%d\nA: dev=189:%d\nA: speed=480\nA: idVendor=%04x\n"
                "A: idProduct=%04x\nA: bConfigurationValue=1\nA: bNumConfigurations=1\n"
                "A: bNumInterfaces= 1\nA: manufacturer=%s\nA: product=%s\nA: serial=%s\n"
                "H: descriptors=%s\n",
                p->syspath.c_str() + 4, p->devnode.c_str(), id.vendor_id, id.product_id,
                id.bcd_device, p->devnum, minor, p->devnum, minor, id.vendor_id, id.product_id,
                id.manufacturer.c_str(), id.product.c_str(), id.serial.c_str(),
                hex(emulator::descriptor_bytes(id)).c_str());
  if (!umockdev_testbed_add_from_string(impl_->testbed, record, &error))
    throw std::runtime_error(std::string("add_from_string: ") + error->message);
}

void UsbTestbed::unplug(int port) {
  Impl::Port* p = nullptr;
  {
    std::lock_guard lock(impl_->mutex);
    p = impl_->current[std::size_t(port)];
    if (p == nullptr) return;
    impl_->current[std::size_t(port)] = nullptr;
    p->disconnected = true;
    // As the host controller does: everything in flight ends with -ESHUTDOWN, reapable after
    // the disconnect (USBDEVFS_CAP_REAP_AFTER_DISCONNECT).
    for (auto* queue : {&p->pending_in, &p->pending_out}) {
      while (!queue->empty()) {
        Urb x = queue->front();
        queue->pop_front();
        impl_->finish(*p, x, -ESHUTDOWN, 0);
      }
    }
  }
  umockdev_testbed_uevent(impl_->testbed, p->syspath.c_str(), "remove");  // hot-plug LEFT
  ::close(p->master_fd);  // the node hangs up: POLLERR|POLLHUP, libusb's disconnect path
  p->master_fd = -1;
  if (p->guard > 0) {
    kill(p->guard, SIGKILL);  // in case the hangup did not reach it
    waitpid(p->guard, nullptr, 0);
    p->guard = 0;
  }
  umockdev_testbed_remove_device(impl_->testbed, p->syspath.c_str());
}

void UsbTestbed::with_lock(const std::function<void()>& f) {
  std::lock_guard lock(impl_->mutex);
  f();
}

UsbfsCounters UsbTestbed::counters() {
  std::lock_guard lock(impl_->mutex);
  return impl_->counters;
}

}  // namespace sonoflow::drivers::test
