#include "core/wc_status.hpp"

#include <gtest/gtest.h>

namespace fabscope::core {
namespace {

TEST(WcStatusName, LibibverbsNameOrQuestionMark) {
  EXPECT_STREQ(wc_status_name(12), "IBV_WC_RETRY_EXC_ERR");
  EXPECT_STREQ(wc_status_name(99), "?");
}

}  // namespace
}  // namespace fabscope::core
