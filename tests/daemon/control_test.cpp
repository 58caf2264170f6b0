// The control socket: who may read and who may change things, bad requests answered with an
// error (never a crash), and a real SOCK_SEQPACKET round trip with SO_PEERCRED.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <memory>
#include <random>

#include "daemon/control/control_server.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "daemon/supervisor/supervisor.hpp"

namespace sonoflow::daemon {
namespace {

bool is_error(const std::string& reply, const std::string& code) {
  return reply.find("\"ok\":false") != std::string::npos &&
         reply.find("\"code\":\"" + code + "\"") != std::string::npos;
}
bool is_ok(const std::string& reply) { return reply.rfind("{\"ok\":true", 0) == 0; }

struct ControlRig {
  ControlRig() : clock(0), hand(clock, 120), renderer(config), array(clock) {
    config.control.socket = ::testing::TempDir() + "ctl" + std::to_string(getpid()) + ".sock";
    config.control.group = "";
    config.control.admin_group = "";
    pipeline = std::make_unique<Pipeline>(config, clock, PipelineParts{hand, fluid, renderer, array},
                                          &region);
    std::string error;
    server = ControlServer::open(config, error);
    EXPECT_TRUE(server) << error;
    server->set_status(&region);
    supervisor = std::make_unique<Supervisor>(config, "", clock, *pipeline, nullptr, signals, notifier,
                                              server.get());
  }
  std::string ask(const std::string& request, bool read, bool write) {
    PeerCredentials peer;
    peer.uid = 4242;
    peer.may_read = read;
    peer.may_write = write;
    return server->respond(request, peer, *supervisor);
  }

  Config config;
  rt::VirtualClock clock;
  ScriptedHand hand;
  PalmDragField fluid;
  KernelRenderer renderer;
  EmulatedArray array;
  status::StatusRegion region;
  SignalInbox signals;
  Notifier notifier;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<ControlServer> server;
  std::unique_ptr<Supervisor> supervisor;
};

TEST(Control, StrangersAreRefusedEverything) {
  ControlRig rig;
  EXPECT_TRUE(is_error(rig.ask("status", false, false), "not_authorised"));
  EXPECT_TRUE(is_error(rig.ask("ping", false, false), "not_authorised"));
}

TEST(Control, ReadersMayLookButNotTouch) {
  ControlRig rig;
  EXPECT_NE(rig.ask("status", true, false).find("\"schema\":\"sonoflow.status\""), std::string::npos);
  EXPECT_TRUE(is_ok(rig.ask("get haptic.mode", true, false)));
  EXPECT_TRUE(is_error(rig.ask("mode stm", true, false), "not_authorised"));
  EXPECT_EQ(rig.config.haptic.mode, "am");
}

TEST(Control, AdminsChangeLiveKeys) {
  ControlRig rig;
  EXPECT_TRUE(is_ok(rig.ask("mode stm", true, true)));
  EXPECT_EQ(rig.config.haptic.mode, "stm");
  EXPECT_TRUE(is_ok(rig.ask("tau 0.5", true, true)));
  EXPECT_DOUBLE_EQ(rig.config.fluid.tau_s, 0.5);
  EXPECT_TRUE(is_ok(rig.ask("material syrup", true, true)));
  EXPECT_EQ(rig.config.fluid.material, "syrup");
  EXPECT_TRUE(is_ok(rig.ask("set safety.max_intensity 0.5", true, true)));
  // The new settings reach the haptic thread's mailbox.
  ASSERT_TRUE(rig.pipeline->links().haptic_settings.fetch());
  EXPECT_EQ(rig.pipeline->links().haptic_settings.read_slot().mode, HapticMode::STM);
  EXPECT_FLOAT_EQ(rig.pipeline->links().haptic_settings.read_slot().max_intensity, 0.5f);
}

// The fluid's presets: listed to readers, and a material switch to a name not among them is
// refused naming the ones there are ('-' and '_' are the same in preset names).
TEST(Control, MaterialsAreTheFluidsPresets) {
  ControlRig rig;
  rig.server->set_materials({"honey", "runny_cream", "water"});
  EXPECT_EQ(rig.ask("materials", true, false), R"({"ok":true,"materials":["honey","runny_cream","water"]})");
  const std::string refused = rig.ask("material syrup", true, true);
  EXPECT_TRUE(is_error(refused, "unknown_material")) << refused;
  EXPECT_NE(refused.find("honey, runny_cream, water"), std::string::npos) << refused;
  EXPECT_TRUE(is_error(rig.ask("set fluid.material syrup", true, true), "unknown_material"));
  EXPECT_EQ(rig.config.fluid.material, Config{}.fluid.material) << "a refused name changes nothing";
  EXPECT_TRUE(is_ok(rig.ask("material runny-cream", true, true)));
  EXPECT_EQ(rig.config.fluid.material, "runny-cream");
}

TEST(Control, BadRequestsGetErrorRepliesNamingTheProblem) {
  ControlRig rig;
  EXPECT_TRUE(is_error(rig.ask("", true, true), "bad_request"));
  EXPECT_TRUE(is_error(rig.ask("   ", true, true), "bad_request"));
  EXPECT_TRUE(is_error(rig.ask("frobnicate", true, true), "unknown_verb"));
  EXPECT_TRUE(is_error(rig.ask("mode", true, true), "bad_request"));
  EXPECT_TRUE(is_error(rig.ask("mode loud", true, true), "invalid_value"));
  EXPECT_TRUE(is_error(rig.ask("alpha 7", true, true), "invalid_value"));
  EXPECT_TRUE(is_error(rig.ask("set haptic.rate_hz 500", true, true), "invalid_value"));
  EXPECT_TRUE(is_error(rig.ask("set", true, true), "bad_request"));
  EXPECT_TRUE(is_error(rig.ask("get nope", true, true), "unknown_key"));
  EXPECT_TRUE(is_error(rig.ask("scene /nonexistent.toml", true, true), "bad_scene"));
  EXPECT_TRUE(is_error(rig.ask("record start", true, true), "unavailable"));
  EXPECT_TRUE(is_error(rig.ask(std::string("mode\0stm", 8), true, true), "bad_request"));
  EXPECT_EQ(rig.config.haptic.mode, "am");
}

TEST(Control, ScenesMayOnlySetLiveKeys) {
  ControlRig rig;
  const std::string good = ::testing::TempDir() + "scene_good.toml";
  const std::string bad = ::testing::TempDir() + "scene_bad.toml";
  FILE* f = std::fopen(good.c_str(), "w");
  std::fputs("[fluid]\nmaterial = \"syrup\"\ntau_s = 0.5\n[haptic]\nmode = \"stm\"\n", f);
  std::fclose(f);
  f = std::fopen(bad.c_str(), "w");
  std::fputs("[haptic]\nrate_hz = 500\n", f);
  std::fclose(f);
  EXPECT_TRUE(is_ok(rig.ask("scene " + good, true, true)));
  EXPECT_EQ(rig.config.fluid.material, "syrup");
  EXPECT_EQ(rig.config.haptic.mode, "stm");
  const std::string reply = rig.ask("scene " + bad, true, true);
  EXPECT_TRUE(is_error(reply, "bad_scene"));
  EXPECT_NE(reply.find("haptic.rate_hz"), std::string::npos);
}

TEST(Control, ShippedScenesLoad) {
  ControlRig rig;
  for (const char* scene : {"stir-honey.toml", "cream-stm.toml"}) {
    EXPECT_TRUE(is_ok(rig.ask(std::string("scene ") + SONOFLOW_SOURCE_DIR "/config/scenes/" + scene, true, true)))
        << scene;
  }
}

// stir-rod-honey turns force feedback on, which needs a restart: loading it live is refused and
// says which key (it is a config to start the daemon with).
TEST(Control, ForceFeedbackSceneIsRefusedLiveNamingTheKey) {
  ControlRig rig;
  const std::string reply =
      rig.ask(std::string("scene ") + SONOFLOW_SOURCE_DIR "/config/scenes/stir-rod-honey.toml", true, true);
  EXPECT_TRUE(is_error(reply, "bad_scene")) << reply;
  EXPECT_NE(reply.find("force_feedback.enabled"), std::string::npos) << reply;
  EXPECT_FALSE(rig.config.force_feedback.enabled);
}

TEST(Control, RandomBytesNeverCrashAndAlwaysGetAReply) {
  ControlRig rig;
  std::mt19937 rng(7);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz ._-0123456789\n\t\"\\{}";
  for (int i = 0; i < 2000; ++i) {
    std::string request(rng() % 64, ' ');
    for (auto& c : request) c = i % 2 ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
    const std::string reply = rig.ask(request, true, i % 3 == 0);
    ASSERT_EQ(reply.front(), '{');
    ASSERT_EQ(reply.back(), '}');
  }
}

TEST(Control, SocketRoundTripChecksPeerCredentials) {
  ControlRig rig;
  struct stat st {};
  ASSERT_EQ(stat(rig.config.control.socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);

  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, rig.config.control.socket.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const auto exchange = [&](const std::string& request) {
    send(fd, request.data(), request.size(), 0);
    pollfd fds[1 + ControlServer::kMaxClients];
    for (int tries = 0; tries < 10; ++tries) {
      const int n = rig.server->fill_pollfds(fds);
      poll(fds, static_cast<nfds_t>(n), 100);
      rig.server->handle(fds, static_cast<std::size_t>(n), *rig.supervisor);
      char buffer[65536];
      const ssize_t got = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got > 0) return std::string(buffer, static_cast<std::size_t>(got));
    }
    return std::string();
  };
  // Same uid as the daemon: may read and write.
  EXPECT_NE(exchange("ping").find("pong"), std::string::npos);
  EXPECT_TRUE(is_ok(exchange("mode off")));
  EXPECT_EQ(rig.config.haptic.mode, "off");
  // An oversized message is refused, and the connection keeps working.
  EXPECT_TRUE(is_error(exchange(std::string(5000, 'x')), "too_long"));
  EXPECT_NE(exchange("ping").find("pong"), std::string::npos);
  close(fd);
}

}  // namespace
}  // namespace sonoflow::daemon
