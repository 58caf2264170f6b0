// The udev rule generated from systemd/70-sonoflow.rules.in grants the service group access to
// exactly the USB identities the drivers look for.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/tracker_messages.hpp"

namespace sonoflow::drivers {
namespace {

std::vector<std::string> rule_lines() {
  std::ifstream in(SONOFLOW_UDEV_RULES_FILE);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

std::string hex4(std::uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", v);
  return b;
}

TEST(UdevRule, GrantsTheServiceGroupBothDevicesAndKeepsThemAwake) {
  const std::vector<std::string> lines = rule_lines();
  ASSERT_FALSE(lines.empty()) << "rule file: " << SONOFLOW_UDEV_RULES_FILE;
  const std::pair<std::uint16_t, std::uint16_t> ids[] = {{kArrayVid, kArrayPid},
                                                         {kTrackerVid, kTrackerPid}};
  for (const auto& [vid, pid] : ids) {
    int permission_rules = 0, power_rules = 0;
    for (const std::string& l : lines) {
      EXPECT_EQ(l.find('@'), std::string::npos) << "unsubstituted template variable: " << l;
      if (l.find("ATTR{idVendor}==\"" + hex4(vid) + "\"") == std::string::npos ||
          l.find("ATTR{idProduct}==\"" + hex4(pid) + "\"") == std::string::npos ||
          l.find("SUBSYSTEM==\"usb\"") == std::string::npos)
        continue;
      // Permissions must not hide behind a condition that can fail (TEST).
      if (l.find("GROUP=\"" SONOFLOW_GROUP "\"") != std::string::npos &&
          l.find("MODE=\"0660\"") != std::string::npos && l.find("TEST==") == std::string::npos)
        ++permission_rules;
      if (l.find("ATTR{power/control}=\"on\"") != std::string::npos) ++power_rules;
    }
    EXPECT_EQ(permission_rules, 1) << hex4(vid) << ":" << hex4(pid);
    EXPECT_EQ(power_rules, 1) << hex4(vid) << ":" << hex4(pid);
  }
}

}  // namespace
}  // namespace sonoflow::drivers
