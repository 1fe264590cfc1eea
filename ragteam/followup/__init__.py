"""Follow-up questions made to stand alone, by a model fitted on people's rewrites."""

from ragteam.followup.model import FollowUps, answer_only, standalone

__all__ = ["FollowUps", "answer_only", "standalone"]
