#include "presets/presets.h"

#include <cmath>
#include <memory>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/numerics/shortest_double.h"
#include "core/spec/grid_spec.h"
#include "presets/grid_presets.h"

namespace posenc {
namespace {

using Spec = std::variant<TableSpec, EncodingSpec>;
using Builder = absl::StatusOr<Spec> (*)(PresetArguments& args, DType dtype,
                                         const SpecLimits& limits);

#define POSENC_ASSIGN_OR_RETURN(lhs, expr)      \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

#define POSENC_RETURN_IF_ERROR(expr)                            \
  if (absl::Status posenc_status = (expr); !posenc_status.ok()) \
  return posenc_status

// The timestep embedding shared by diffusers, guided-diffusion and FLUX:
// half = dim // 2, f_i = max_period^(-i / (half - shift)), angle
// scale * t * f_i, [sin | cos] or [cos | sin], one zero column for an odd
// dim.
EncodingSpec Timestep(uint32_t dim, bool cos_first, double shift, double scale,
                      double max_period, DType dtype) {
  EncodingSpec spec;
  spec.dim = dim;
  spec.dtype = dtype;
  spec.layout = cos_first ? Layout::kConcatCosSin : Layout::kConcatSinCos;
  spec.scheme = FrequencyScheme::kExponential;
  spec.max_period = max_period;
  spec.shift = shift;
  spec.scale = scale;
  spec.pad_odd_dim = dim % 2 == 1;
  return spec;
}

// diffusers get_timestep_embedding(timesteps, embedding_dim,
// flip_sin_to_cos=False, downscale_freq_shift=1, scale=1, max_period=10000).
absl::StatusOr<Spec> DiffusersTimestep(PresetArguments& args, DType dtype,
                                       const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim,
                          args.Count("embedding_dim", {}, 2, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(flip, args.Bool("flip_sin_to_cos", false));
  POSENC_ASSIGN_OR_RETURN(shift, args.Number("downscale_freq_shift", 1.0));
  POSENC_ASSIGN_OR_RETURN(scale, args.Number("scale", 1.0));
  POSENC_ASSIGN_OR_RETURN(max_period, args.Number("max_period", 10000.0));
  return Timestep(dim, flip, shift, scale, max_period, dtype);
}

// diffusers Timesteps(num_channels, flip_sin_to_cos, downscale_freq_shift,
// scale=1): the module UNets and DiTs hold; it calls the function above.
absl::StatusOr<Spec> DiffusersTimesteps(PresetArguments& args, DType dtype,
                                        const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("num_channels", {}, 2, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(flip, args.Bool("flip_sin_to_cos", {}));
  POSENC_ASSIGN_OR_RETURN(shift, args.Number("downscale_freq_shift", {}));
  POSENC_ASSIGN_OR_RETURN(scale, args.Number("scale", 1.0));
  return Timestep(dim, flip, shift, scale, 10000.0, dtype);
}

// guided-diffusion / GLIDE timestep_embedding(timesteps, dim,
// max_period=10000): f_i = exp(-ln(max_period) i / half), [cos | sin].
absl::StatusOr<Spec> GuidedDiffusionTimestep(PresetArguments& args, DType dtype,
                                             const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("dim", {}, 2, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(max_period, args.Number("max_period", 10000.0));
  return Timestep(dim, /*cos_first=*/true, 0, 1, max_period, dtype);
}

// FLUX timestep_embedding(t, dim, max_period=10000, time_factor=1000.0):
// GLIDE's with t multiplied by time_factor.
absl::StatusOr<Spec> FluxTimestep(PresetArguments& args, DType dtype,
                                  const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("dim", {}, 2, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(max_period, args.Number("max_period", 10000.0));
  POSENC_ASSIGN_OR_RETURN(time_factor, args.Number("time_factor", 1000.0));
  return Timestep(dim, /*cos_first=*/true, 0, time_factor, max_period, dtype);
}

// nerfstudio NeRFEncoding(in_dim, num_frequencies, min_freq_exp,
// max_freq_exp, include_input=False): x 2 pi 2^linspace(min, max, n),
// sin of [x f, x f + pi/2] (so [sin | cos] over all in_dim * n pairs),
// then the input.
absl::StatusOr<Spec> NerfstudioNerf(PresetArguments& args, DType dtype,
                                    const SpecLimits& limits) {
  EncodingSpec spec;
  spec.dtype = dtype;
  spec.layout = Layout::kConcatSinCos;
  spec.scheme = FrequencyScheme::kOctaves;
  POSENC_ASSIGN_OR_RETURN(in_dim, args.Count("in_dim", {}, 1, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(n,
                          args.Count("num_frequencies", {}, 1, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(min_exp, args.Number("min_freq_exp", {}));
  POSENC_ASSIGN_OR_RETURN(max_exp, args.Number("max_freq_exp", {}));
  POSENC_ASSIGN_OR_RETURN(include_input, args.Bool("include_input", false));
  spec.coordinates = in_dim;
  spec.num_frequencies = n;
  spec.min_freq_exp = min_exp;
  spec.max_freq_exp = max_exp;
  spec.include_input = include_input;
  return spec;
}

absl::Status InvalidArgument(absl::string_view name, absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("arguments.", name, ": ", rule));
}

// A positive finite double as the exact ratio num / den of 32-bit integers
// (every double is a dyadic rational; 1.5 = 3/2, 1.875 = 15/8). Scales
// such as 0.1 are no such ratio: refused rather than rounded.
struct Ratio {
  uint32_t num = 1, den = 1;
};
absl::StatusOr<Ratio> ExactRatio(absl::string_view name, double x) {
  if (!(x > 0) || !std::isfinite(x)) {
    return InvalidArgument(
        name, absl::StrCat(ShortestDouble(x), " must be finite and > 0"));
  }
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  uint64_t mant = static_cast<uint64_t>(std::ldexp(m, 53));
  e -= 53;
  while (mant % 2 == 0) {
    mant /= 2;
    ++e;
  }
  const bool fits = e >= 0 ? (e < 32 && (mant << e) <= UINT32_MAX)
                           : (e > -32 && mant <= UINT32_MAX);
  if (!fits) {
    return InvalidArgument(
        name, absl::StrCat(ShortestDouble(x),
                           " is not exactly a ratio of 32-bit integers "
                           "(posenc takes grid positions exactly)"));
  }
  return Ratio{static_cast<uint32_t>(e >= 0 ? mant << e : mant),
               static_cast<uint32_t>(e >= 0 ? 1 : uint64_t{1} << -e)};
}

// OK when the position step num / den, reduced, is a ratio of 32-bit
// integers (what GridSpec holds); else INVALID_ARGUMENT naming `name`.
absl::Status CheckStep(absl::string_view name, uint64_t num, uint64_t den) {
  const uint64_t g = std::gcd(num, den);
  if (num / g > UINT32_MAX || den / g > UINT32_MAX) {
    return InvalidArgument(name,
                           "gives a position step that is not a ratio "
                           "of 32-bit integers");
  }
  return absl::OkStatus();
}

TableSpec WithDType(TableSpec spec, DType dtype) {
  spec.dtype = dtype;
  return spec;
}

absl::Status MultipleOf(absl::string_view name, uint32_t value, uint32_t k,
                        absl::string_view why) {
  if (value % k == 0) return absl::OkStatus();
  return InvalidArgument(
      name, absl::StrCat(value, " must be a multiple of ", k, " (", why, ")"));
}

// MAE get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False): axes
// (h, w) of grid_size points at integer positions, each D/2 channels of
// [sin | cos] with base 10000; meshgrid(w, h) puts the column's block
// first; cls_token prepends one zero row.
absl::StatusOr<Spec> MaePosEmbed(PresetArguments& args, DType dtype,
                                 const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("embed_dim", {}, 4, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(n, args.Count("grid_size", {}, 1, 65535));
  POSENC_ASSIGN_OR_RETURN(cls, args.Bool("cls_token", false));
  POSENC_RETURN_IF_ERROR(
      MultipleOf("embed_dim", dim, 4, "two axes of [sin | cos] halves"));
  return WithDType(MaeGrid(dim, n, cls), dtype);
}

// diffusers get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False,
// extra_tokens=0, interpolation_scale=1.0, base_size=16): grid_size an int
// or (h, w); position k on an axis of n is k / (n / base_size) /
// interpolation_scale, taken as the exact rational; the column's block
// first; extra_tokens zero rows first when cls_token.
absl::StatusOr<Spec> Diffusers2d(PresetArguments& args, DType dtype,
                                 const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("embed_dim", {}, 4, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(sizes, args.Counts("grid_size", {}, 1, 65535, 1, 2));
  POSENC_ASSIGN_OR_RETURN(cls, args.Bool("cls_token", false));
  POSENC_ASSIGN_OR_RETURN(extra, args.Count("extra_tokens", 0u, 0, 65535));
  POSENC_ASSIGN_OR_RETURN(scale, args.Number("interpolation_scale", 1.0));
  POSENC_ASSIGN_OR_RETURN(base_size, args.Count("base_size", 16u, 1, 65535));
  POSENC_RETURN_IF_ERROR(
      MultipleOf("embed_dim", dim, 4, "two axes of [sin | cos] halves"));
  POSENC_ASSIGN_OR_RETURN(ratio, ExactRatio("interpolation_scale", scale));
  const uint64_t s_num = ratio.num, s_den = ratio.den;
  const uint32_t gh = sizes[0], gw = sizes.size() == 2 ? sizes[1] : sizes[0];
  for (uint32_t n : {gh, gw}) {
    // k * base_size / (n * s_num / s_den) = k * base_size * s_den / (n s_num)
    POSENC_RETURN_IF_ERROR(CheckStep("grid_size", uint64_t{base_size} * s_den,
                                     uint64_t{n} * s_num));
  }
  DiffusersGridOptions options;
  options.base_size = base_size;
  options.scale_num = ratio.num;
  options.scale_den = ratio.den;
  options.cls_token = cls;
  options.extra_tokens = extra;
  return WithDType(DiffusersGrid(dim, gh, gw, options), dtype);
}

// diffusers PatchEmbed(height=224, width=224, patch_size=16, embed_dim=768,
// interpolation_scale=1, pos_embed_max_size=None): the table its forward
// adds for a latent of latent_height x latent_width (default height x
// width): base_size = height // patch_size; with pos_embed_max_size M, the
// M x M table cropped at the centre (top = (M - h) // 2, left = (M - w) //
// 2), as SD3; else a table at the latent's own grid.
absl::StatusOr<Spec> DiffusersPatchEmbed(PresetArguments& args, DType dtype,
                                         const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(height, args.Count("height", 224u, 1, 1u << 20));
  POSENC_ASSIGN_OR_RETURN(width, args.Count("width", 224u, 1, 1u << 20));
  POSENC_ASSIGN_OR_RETURN(patch, args.Count("patch_size", 16u, 1, 65535));
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("embed_dim", 768u, 4, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(scale, args.Number("interpolation_scale", 1.0));
  POSENC_ASSIGN_OR_RETURN(max_size,
                          args.Count("pos_embed_max_size", 0u, 0, 65535));
  POSENC_ASSIGN_OR_RETURN(latent_h,
                          args.Count("latent_height", height, 1, 1u << 20));
  POSENC_ASSIGN_OR_RETURN(latent_w,
                          args.Count("latent_width", width, 1, 1u << 20));
  POSENC_RETURN_IF_ERROR(
      MultipleOf("embed_dim", dim, 4, "two axes of [sin | cos] halves"));
  POSENC_ASSIGN_OR_RETURN(ratio, ExactRatio("interpolation_scale", scale));
  const uint64_t s_num = ratio.num, s_den = ratio.den;
  const uint32_t base_size = height / patch;
  if (base_size == 0) {
    return InvalidArgument("height", "is smaller than patch_size");
  }
  const uint32_t h = latent_h / patch, w = latent_w / patch;
  if (h == 0 || w == 0) {
    return InvalidArgument("latent_height",
                           "and latent_width must be at least patch_size");
  }
  if (max_size > 0 && (h > max_size || w > max_size)) {
    return InvalidArgument(
        "latent_height",
        absl::StrCat("/ patch_size = ", h,
                     " and latent_width / patch_size "
                     "= ",
                     w, " must be at most pos_embed_max_size = ", max_size,
                     " (diffusers raises ValueError)"));
  }
  for (uint32_t n : {h, w}) {
    POSENC_RETURN_IF_ERROR(
        CheckStep("pos_embed_max_size", uint64_t{base_size} * s_den,
                  uint64_t{max_size > 0 ? max_size : n} * s_num));
  }
  DiffusersGridOptions options;
  options.base_size = base_size;
  options.scale_num = ratio.num;
  options.scale_den = ratio.den;
  options.pos_embed_max_size = max_size;
  return WithDType(DiffusersGrid(dim, h, w, options), dtype);
}

// timm build_sincos2d_pos_embed(feat_shape, dim=64, temperature=10000.,
// reverse_coord=False, interleave_sin_cos=False): dim/4 bands
// temperature^(-i / (dim/4)) per axis over the integer grid (rows over
// feat_shape, reversed with reverse_coord); [sin_0, sin_1, cos_0, cos_1],
// or [sin_0, cos_0, sin_1, cos_1] with interleave_sin_cos.
absl::StatusOr<Spec> TimmSincos2d(PresetArguments& args, DType dtype,
                                  const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(shape, args.Counts("feat_shape", {}, 1, 65535, 2, 2));
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("dim", 64u, 4, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(temperature, args.Number("temperature", 10000.0));
  POSENC_ASSIGN_OR_RETURN(reverse, args.Bool("reverse_coord", false));
  POSENC_ASSIGN_OR_RETURN(interleave, args.Bool("interleave_sin_cos", false));
  POSENC_RETURN_IF_ERROR(
      MultipleOf("dim", dim, 4, "timm asserts dim % 4 == 0"));
  return WithDType(
      TimmGrid(shape[0], shape[1], dim, temperature, reverse, interleave),
      dtype);
}

// diffusers get_3d_sincos_pos_embed(embed_dim, spatial_size, temporal_size,
// spatial_interpolation_scale=1.0, temporal_interpolation_scale=1.0)
// (CogVideoX): spatial_size (W, H) or an int; rows over (t, h, w); a
// token is [temporal D/4 | w 3D/8 | h 3D/8], positions k / scale.
absl::StatusOr<Spec> CogVideoX3d(PresetArguments& args, DType dtype,
                                 const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("embed_dim", {}, 16, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(spatial,
                          args.Counts("spatial_size", {}, 1, 65535, 1, 2));
  POSENC_ASSIGN_OR_RETURN(t, args.Count("temporal_size", {}, 1, 65535));
  POSENC_ASSIGN_OR_RETURN(s_scale,
                          args.Number("spatial_interpolation_scale", 1.0));
  POSENC_ASSIGN_OR_RETURN(t_scale,
                          args.Number("temporal_interpolation_scale", 1.0));
  POSENC_RETURN_IF_ERROR(
      MultipleOf("embed_dim", dim, 16,
                 "a quarter temporal and two spatial eighths "
                 "of 3/8, each [sin | cos]"));
  POSENC_ASSIGN_OR_RETURN(spatial_ratio,
                          ExactRatio("spatial_interpolation_scale", s_scale));
  POSENC_ASSIGN_OR_RETURN(temporal_ratio,
                          ExactRatio("temporal_interpolation_scale", t_scale));
  const uint32_t w = spatial[0], h = spatial.size() == 2 ? spatial[1] : w;
  return WithDType(
      // Each scale's parts fit 32 bits, so each step (den / num) does.
      CogVideoXGrid(dim, w, h, t, spatial_ratio.num, spatial_ratio.den,
                    temporal_ratio.num, temporal_ratio.den),
      dtype);
}

EncodingSpec MultiAxis(DType dtype, Layout layout, double theta) {
  EncodingSpec spec;
  spec.dtype = dtype;
  spec.layout = layout;
  spec.max_period = theta;
  return spec;
}

// FLUX EmbedND(dim, theta, axes_dim): per axis theta^(-2i / axes_dim[a]),
// the axes concatenated, each pair the matrix [[cos, -sin], [sin, cos]].
absl::StatusOr<Spec> FluxEmbedNd(PresetArguments& args, DType dtype,
                                 const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("dim", 0u, 0, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(theta, args.Number("theta", {}));
  POSENC_ASSIGN_OR_RETURN(axes,
                          args.Counts("axes_dim", {}, 2, limits.max_d, 1, 8));
  EncodingSpec spec = MultiAxis(dtype, Layout::kRotationMatrix, theta);
  spec.axes_dim = axes;
  spec.coordinates = static_cast<uint32_t>(axes.size());
  const uint64_t sum = std::accumulate(axes.begin(), axes.end(), uint64_t{0});
  if (dim != 0 && dim != sum) {
    return InvalidArgument("dim",
                           absl::StrCat(dim, " is not sum(axes_dim) = ", sum));
  }
  return spec;
}

// diffusers FluxPosEmbed(theta, axes_dim): the same frequencies as cos and
// sin tables with each value twice (repeat_interleave_real): [cos | sin].
absl::StatusOr<Spec> DiffusersFluxPosEmbed(PresetArguments& args, DType dtype,
                                           const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(theta, args.Number("theta", {}));
  POSENC_ASSIGN_OR_RETURN(axes,
                          args.Counts("axes_dim", {}, 2, limits.max_d, 1, 8));
  EncodingSpec spec = MultiAxis(dtype, Layout::kInterleavedPairs, theta);
  spec.axes_dim = axes;
  spec.coordinates = static_cast<uint32_t>(axes.size());
  return spec;
}

// Qwen2-VL / Qwen2.5-VL M-RoPE (transformers Qwen2VLRotaryEmbedding and
// apply_multimodal_rotary_pos_emb): inv_freq = rope_theta^(-2i / head_dim);
// frequency i takes the temporal, height or width id by mrope_section;
// HF's cos and sin (rotate_half), each head_dim wide.
absl::StatusOr<Spec> QwenMrope(PresetArguments& args, DType dtype,
                               const SpecLimits& limits, bool interleaved) {
  POSENC_ASSIGN_OR_RETURN(head_dim,
                          args.Count("head_dim", {}, 2, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(theta, args.Number("rope_theta", {}));
  POSENC_ASSIGN_OR_RETURN(
      sections, args.Counts("mrope_section", {}, 1, limits.max_d, 3, 3));
  EncodingSpec spec = MultiAxis(dtype, Layout::kRotateHalf, theta);
  spec.dim = head_dim;
  spec.mrope_section = sections;
  spec.mrope_interleaved = interleaved;
  spec.coordinates = 3;
  return spec;
}
absl::StatusOr<Spec> Qwen2VlMrope(PresetArguments& args, DType dtype,
                                  const SpecLimits& limits) {
  return QwenMrope(args, dtype, limits, false);
}
absl::StatusOr<Spec> Qwen3VlMrope(PresetArguments& args, DType dtype,
                                  const SpecLimits& limits) {
  return QwenMrope(args, dtype, limits, true);
}

// timm RotaryEmbeddingCat(dim, temperature=10000, in_pixels=False) (EVA-02):
// dim/4 bands temperature^(-i / (dim/4)) per axis of a 2D grid, each value
// twice (repeat_interleave(2)). timm returns cat([sin, cos]); posenc's
// interleaved_pairs row is [cos | sin] (swap the halves).
absl::StatusOr<Spec> TimmRotaryCat(PresetArguments& args, DType dtype,
                                   const SpecLimits& limits) {
  POSENC_ASSIGN_OR_RETURN(dim, args.Count("dim", {}, 4, limits.max_d));
  POSENC_ASSIGN_OR_RETURN(temperature, args.Number("temperature", 10000.0));
  POSENC_ASSIGN_OR_RETURN(in_pixels, args.Bool("in_pixels", true));
  if (in_pixels) {
    return InvalidArgument(
        "in_pixels",
        "True (timm's default) uses pixel bands linspace(1, max_res / 2) pi "
        "over linspace(-1, 1) coordinates; posenc serves in_pixels=False "
        "(EVA-02)");
  }
  POSENC_RETURN_IF_ERROR(MultipleOf("dim", dim, 4, "dim / 4 bands per axis"));
  EncodingSpec spec = MultiAxis(dtype, Layout::kInterleavedPairs, temperature);
  spec.axes_dim = {dim / 2, dim / 2};
  spec.coordinates = 2;
  return spec;
}

struct Entry {
  PresetInfo info;
  Builder build;
};

const std::vector<Entry>& Entries() {
  static const auto* entries = new std::vector<Entry>{
      {{"diffusers.get_timestep_embedding",
        "diffusers 0002117, src/diffusers/models/embeddings.py "
        "get_timestep_embedding",
        "embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, "
        "scale=1, max_period=10000",
        "encoding"},
       &DiffusersTimestep},
      {{"diffusers.Timesteps",
        "diffusers 0002117, src/diffusers/models/embeddings.py Timesteps "
        "(the time_proj of UNet2DConditionModel, DiT, PixArt, SD3, FLUX)",
        "num_channels, flip_sin_to_cos, downscale_freq_shift, scale=1",
        "encoding"},
       &DiffusersTimesteps},
      {{"guided_diffusion.timestep_embedding",
        "openai/guided-diffusion aca3097, guided_diffusion/nn.py "
        "timestep_embedding (GLIDE's is the same)",
        "dim, max_period=10000", "encoding"},
       &GuidedDiffusionTimestep},
      {{"flux.timestep_embedding",
        "black-forest-labs/flux 5ce5ffcf, src/flux/modules/layers.py "
        "timestep_embedding",
        "dim, max_period=10000, time_factor=1000.0", "encoding"},
       &FluxTimestep},
      {{"nerfstudio.NeRFEncoding",
        "nerfstudio 7d09be5, nerfstudio/field_components/encodings.py "
        "NeRFEncoding (implementation=\"torch\")",
        "in_dim, num_frequencies, min_freq_exp, max_freq_exp, "
        "include_input=False",
        "encoding"},
       &NerfstudioNerf},
      {{"mae.get_2d_sincos_pos_embed",
        "facebookresearch/mae a9f5c70, util/pos_embed.py "
        "get_2d_sincos_pos_embed",
        "embed_dim, grid_size, cls_token=False", "table"},
       &MaePosEmbed},
      {{"diffusers.get_2d_sincos_pos_embed",
        "diffusers 0002117, src/diffusers/models/embeddings.py "
        "get_2d_sincos_pos_embed (DiT, PixArt)",
        "embed_dim, grid_size, cls_token=False, extra_tokens=0, "
        "interpolation_scale=1.0, base_size=16",
        "table"},
       &Diffusers2d},
      {{"diffusers.PatchEmbed",
        "diffusers 0002117, src/diffusers/models/embeddings.py PatchEmbed "
        "(its pos_embed, cropped as SD3's cropped_pos_embed)",
        "height=224, width=224, patch_size=16, embed_dim=768, "
        "interpolation_scale=1, pos_embed_max_size=None, "
        "latent_height=height, latent_width=width",
        "table"},
       &DiffusersPatchEmbed},
      {{"timm.build_sincos2d_pos_embed",
        "timm 0647e28, timm/layers/pos_embed_sincos.py "
        "build_sincos2d_pos_embed",
        "feat_shape, dim=64, temperature=10000., reverse_coord=False, "
        "interleave_sin_cos=False",
        "table"},
       &TimmSincos2d},
      {{"cogvideox.get_3d_sincos_pos_embed",
        "diffusers 0002117, src/diffusers/models/embeddings.py "
        "get_3d_sincos_pos_embed (CogVideoX)",
        "embed_dim, spatial_size, temporal_size, "
        "spatial_interpolation_scale=1.0, temporal_interpolation_scale=1.0",
        "table"},
       &CogVideoX3d},
      {{"flux.EmbedND",
        "black-forest-labs/flux 5ce5ffcf, src/flux/modules/layers.py "
        "EmbedND and math.py rope",
        "dim=sum(axes_dim), theta, axes_dim", "encoding"},
       &FluxEmbedNd},
      {{"diffusers.FluxPosEmbed",
        "diffusers 0002117, src/diffusers/models/embeddings.py FluxPosEmbed "
        "(get_1d_rotary_pos_embed, repeat_interleave_real)",
        "theta, axes_dim", "encoding"},
       &DiffusersFluxPosEmbed},
      {{"qwen2_vl.mrope",
        "transformers 928b5565, models/qwen2_vl/modeling_qwen2_vl.py "
        "Qwen2VLRotaryEmbedding + apply_multimodal_rotary_pos_emb "
        "(Qwen2-VL, Qwen2.5-VL)",
        "head_dim, rope_theta, mrope_section", "encoding"},
       &Qwen2VlMrope},
      {{"qwen3_vl.mrope",
        "transformers 68a7b7e2, models/qwen3_vl/modeling_qwen3_vl.py "
        "Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope",
        "head_dim, rope_theta, mrope_section", "encoding"},
       &Qwen3VlMrope},
      {{"timm.RotaryEmbeddingCat",
        "timm 0647e28, timm/layers/pos_embed_sincos.py RotaryEmbeddingCat "
        "(in_pixels=False: EVA-02)",
        "dim, temperature=10000, in_pixels=True", "encoding"},
       &TimmRotaryCat},
  };
  return *entries;
}

std::string KnownNames() {
  return absl::StrJoin(Entries(), ", ", [](std::string* out, const Entry& e) {
    out->append(e.info.name);
  });
}

}  // namespace

const std::vector<PresetInfo>& Presets() {
  static const auto* infos = [] {
    auto* v = new std::vector<PresetInfo>;
    for (const Entry& e : Entries()) v->push_back(e.info);
    return v;
  }();
  return *infos;
}

absl::StatusOr<ResolvedPreset> ResolvePreset(absl::string_view name,
                                             PresetArguments arguments,
                                             DType dtype,
                                             const SpecLimits& limits) {
  const std::vector<Entry>& entries = Entries();
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& entry = entries[k];
    if (entry.info.name != name) continue;
    if (absl::Status known =
            arguments.CheckAllKnown(name, entry.info.arguments);
        !known.ok()) {
      return known;
    }
    absl::StatusOr<Spec> spec = entry.build(arguments, dtype, limits);
    if (!spec.ok()) return spec.status();
    if (absl::Status read = arguments.CheckAllRead(name, entry.info.arguments);
        !read.ok()) {
      return read;
    }
    absl::Status valid =
        std::holds_alternative<TableSpec>(*spec)
            ? ValidateSpec(std::get<TableSpec>(*spec), limits)
            : ValidateEncodingSpec(std::get<EncodingSpec>(*spec), limits);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " gives an invalid spec: ", valid.message()));
    }
    return ResolvedPreset{&Presets()[k], *std::move(spec)};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("preset: \"", name.substr(0, 64),
                   "\" is not a known preset (", KnownNames(), ")"));
}

}  // namespace posenc
