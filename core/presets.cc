#include "core/presets.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace posenc {
namespace {

using Spec = std::variant<TableSpec, RealEncodingSpec>;
using Builder = absl::StatusOr<Spec> (*)(PresetArguments& args, DType dtype,
                                         const SpecLimits& limits);

#define POSENC_ASSIGN_OR_RETURN(lhs, expr)      \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

// The timestep embedding shared by diffusers, guided-diffusion and FLUX:
// half = dim // 2, f_i = max_period^(-i / (half - shift)), angle
// scale * t * f_i, [sin | cos] or [cos | sin], one zero column for an odd
// dim.
RealEncodingSpec Timestep(uint32_t dim, bool cos_first, double shift,
                          double scale, double max_period, DType dtype) {
  RealEncodingSpec spec;
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
  RealEncodingSpec spec;
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
    absl::Status valid = std::holds_alternative<TableSpec>(*spec)
                             ? ValidateSpec(std::get<TableSpec>(*spec), limits)
                             : ValidateRealEncodingSpec(
                                   std::get<RealEncodingSpec>(*spec), limits);
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
