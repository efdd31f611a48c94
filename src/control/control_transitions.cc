// The control plane's transitions: planning, checking and storing one (POST
// /v1/transitions), reading them, and moving them (start, resume, abort; the
// rollout commits each step).
#include "control/control_plane_impl.h"

namespace tessera {

ApiResponse ControlPlane::Impl::GetTransitionAt(const std::string& id) {
  ApiResult<int64_t> parsed = PathId(id, "transition");
  return parsed.ok() ? GetTransition(*parsed) : ErrorResponse(parsed.error());
}

ApiResponse ControlPlane::Impl::ActOnTransition(const ApiRequest& request, const std::string& id,
                                                const std::string& action) {
  ApiResult<int64_t> parsed = PathId(id, "transition");
  if (!parsed.ok()) return ErrorResponse(parsed.error());
  if (!request.body.empty()) {
    ApiResult<Json> body = ParseJsonBody(request.body);
    if (!body.ok()) return ErrorResponse(body.error());
    if (!body->is_object() || !body->empty()) {
      return ErrorResponse(ApiError{400, "invalid_argument",
                                    "(root): expected {}, got " + body->dump(), std::nullopt});
    }
  }
  return ChangeTransition(*parsed, action);
}

ApiResult<OJson> ControlPlane::Impl::TransitionJson(const StoredTransition& t, bool full) {
  Result<OJson> j = TransitionView(t, full);
  if (!j.ok()) return InternalError(j.status().message());
  return std::move(j).value();
}

ApiResult<StoredTransition> ControlPlane::Impl::MakeTransition(int64_t to, int spare_gpus) {
  ApiResult<Deployment> target = LoadPlanDeployment(to);
  if (!target.ok()) {
    ApiError error = target.error();
    if (error.status == 404) error.field = "to";
    return error;
  }
  const Deployment from = deployment_ ? *deployment_ : EmptyDeploymentLike(*target);
  TransitionOptions topts;
  topts.spare_gpus = spare_gpus;
  Result<TransitionPlan> planned = PlanTransition(from, *target, topts);
  if (!planned.ok()) return ConflictError("no transition: " + planned.status().message());
  if (!planned->transition) {
    return ConflictError(
        fmt::format("no transition to plan {} within {} spare GPU(s): it needs {}; {}", to,
                    spare_gpus, planned->spare_gpus_needed, planned->reason));
  }
  const Transition& t = *planned->transition;
  const TransitionCheck check = CheckTransition(from, *target, t);
  if (!check.ok()) {
    return InternalError("the transition checker rejects the planned transition: " +
                         check.violations.front());
  }
  StoredTransition stored;
  stored.from_plan = deployment_id_;
  stored.to_plan = to;
  stored.transition_json = FormatTransitionJson(t);
  stored.check_json = FormatTransitionCheckJson(check);
  stored.created_at = options_.wall_time();
  stored.updated_at = stored.created_at;
  stored.steps = StoredStepsOf(t, options_.deploy, options_.routers);
  TESSERA_ASSIGN_OR_RETURN(stored.id, store_->AddTransition(stored));
  return stored;
}

Status ControlPlane::Impl::Commit(StoredTransition t) {
  const bool done = t.state == "done";
  const bool in_flight = t.state == "running" || t.state == "paused";
  std::optional<Deployment> target;
  if (done || in_flight) {
    if (active_ && active_->stored.id == t.id) {
      target = active_->target;
    } else {
      ApiResult<Deployment> d = LoadPlanDeployment(t.to_plan);
      if (!d.ok()) return Status::Internal(d.error().message);
      target = std::move(*d);
    }
  }
  // Done: the cluster holds the target placed on its GPUs (PlacedOnCluster).
  std::optional<int64_t> deployed;
  if (done) {
    TESSERA_ASSIGN_OR_RETURN(*target, Placed(t, *target));
    deployed = t.to_plan;
  }
  TESSERA_RETURN_IF_ERROR(store_->UpdateTransition(t, deployed));
  deployment_reply_ = {};
  if (done) {
    SetDeploymentCache(t.to_plan, std::move(*target));
    active_.reset();
  } else if (in_flight) {
    Result<Transition> parsed = ParseTransitionJson(t.transition_json, "transition");
    if (!parsed.ok()) return Status::Internal(parsed.status().message());
    active_ = Active{std::move(t), std::move(*target), parsed->gpu_map};
  } else if (active_ && active_->stored.id == t.id) {
    active_.reset();
  }
  return RefreshVersion();
}

Result<Deployment> ControlPlane::Impl::Placed(const StoredTransition& t, const Deployment& target) {
  Result<Transition> parsed = ParseTransitionJson(t.transition_json, "transition");
  if (!parsed.ok()) return Status::Internal(parsed.status().message());
  return PlacedOnCluster(target, *parsed);
}

ApiResult<StoredTransition> ControlPlane::Impl::Start(StoredTransition t) {
  if (active_ && active_->stored.id != t.id) {
    return ConflictError(fmt::format("transition {} is {}: one runs at a time", active_->stored.id,
                                     active_->stored.state));
  }
  if (t.from_plan != deployment_id_) {
    return ConflictError(
        fmt::format("transition {} is stale: it starts from plan {}, the deployment is {}", t.id,
                    t.from_plan ? std::to_string(*t.from_plan) : "none",
                    deployment_id_ ? "plan " + std::to_string(*deployment_id_) : "none"));
  }
  if (Status s = StartRollout(t, options_.wall_time()); !s.ok()) return ConflictError(s.message());
  TESSERA_RETURN_IF_ERROR(Commit(t));
  return t;
}

ApiResponse ControlPlane::Impl::PostTransition(const ApiRequest& request) {
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<TransitionRequest> tr = TransitionRequestFromJson(*body);
  if (!tr.ok()) return ErrorResponse(ErrorFromStatus(tr.status()));
  std::lock_guard<std::mutex> lock(mu_);
  if (tr->start && active_) {
    return ErrorResponse(ConflictError(fmt::format("transition {} is {}: one runs at a time",
                                                   active_->stored.id, active_->stored.state)));
  }
  ApiResult<StoredTransition> t =
      MakeTransition(tr->to, tr->spare_gpus.value_or(options_.spare_gpus));
  if (!t.ok()) return ErrorResponse(t.error());
  if (tr->start) {
    t = Start(std::move(*t));
    if (!t.ok()) return ErrorResponse(t.error());
  }
  ApiResult<OJson> j = TransitionJson(*t, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(201, *j);
}

ApiResponse ControlPlane::Impl::ListTransitions(const ApiRequest& request) {
  ApiResult<double> limit = QueryNumber(request, "limit", kListLimit, kDefaultListLimit);
  if (!limit.ok()) return ErrorResponse(limit.error());
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::vector<StoredTransition>> list = store_->Transitions(static_cast<int>(*limit));
  if (!list.ok()) return ErrorResponse(ErrorFromStatus(list.status()));
  OJson out = OJson::array();
  for (const StoredTransition& t : *list) {
    ApiResult<OJson> j = TransitionJson(t, false);
    if (!j.ok()) return ErrorResponse(j.error());
    out.push_back(std::move(*j));
  }
  return JsonResponse(200, OJson{{"transitions", std::move(out)}});
}

ApiResponse ControlPlane::Impl::GetTransition(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::optional<StoredTransition>> t = store_->Transition(id);
  if (!t.ok()) return ErrorResponse(ErrorFromStatus(t.status()));
  if (!*t) return ErrorResponse(NotFoundError(fmt::format("no transition {}", id)));
  ApiResult<OJson> j = TransitionJson(**t, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(200, *j);
}

ApiResponse ControlPlane::Impl::ChangeTransition(int64_t id, const std::string& action) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::optional<StoredTransition>> found = store_->Transition(id);
  if (!found.ok()) return ErrorResponse(ErrorFromStatus(found.status()));
  if (!*found) return ErrorResponse(NotFoundError(fmt::format("no transition {}", id)));
  StoredTransition t = std::move(**found);
  ApiResult<StoredTransition> changed = t;
  if (action == "start") {
    if (t.state != "proposed") {
      return ErrorResponse(
          ConflictError(fmt::format("transition {} is {}: cannot start", id, t.state)));
    }
    changed = Start(std::move(t));
  } else {
    const std::string now = options_.wall_time();
    Status s = action == "resume" ? ResumeRollout(t, now) : AbortRollout(t, now);
    if (!s.ok()) return ErrorResponse(ConflictError(s.message()));
    if (Status c = Commit(t); !c.ok()) return ErrorResponse(ErrorFromStatus(c));
    changed = t;
  }
  if (!changed.ok()) return ErrorResponse(changed.error());
  ApiResult<OJson> j = TransitionJson(*changed, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(200, *j);
}

}  // namespace tessera
