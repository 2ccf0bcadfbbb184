#pragma once
/// \file dualgibbs.hpp
/// Includes the whole public interface of dualgibbs.

#include <dualgibbs/export.hpp>
#include <dualgibbs/version.hpp>

#include <dualgibbs/ensemble.hpp>
#include <dualgibbs/estimators.hpp>
#include <dualgibbs/exact.hpp>
#include <dualgibbs/experiments.hpp>
#include <dualgibbs/generators.hpp>
#include <dualgibbs/graph.hpp>
#include <dualgibbs/io.hpp>
#include <dualgibbs/model.hpp>
#include <dualgibbs/sampler.hpp>
#include <dualgibbs/spectral.hpp>
