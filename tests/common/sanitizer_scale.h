// How much slower code runs under ThreadSanitizer (5-15x, more on a busy
// machine), for tests whose deadlines are a few hundred milliseconds: such
// a deadline is multiplied by kSanitizerTimeScale, so that it still
// expires mid-stream rather than before the first message.
#ifndef POSENC_TESTS_COMMON_SANITIZER_SCALE_H_
#define POSENC_TESTS_COMMON_SANITIZER_SCALE_H_

namespace posenc::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr int kSanitizerTimeScale = 10;
#else
inline constexpr int kSanitizerTimeScale = 1;
#endif

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_SANITIZER_SCALE_H_
