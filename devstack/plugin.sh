#!/bin/bash
#
# plugin.sh - DevStack plugin of baremetal-orch
#
# stack.sh and unstack.sh call it with the phase: install, post-config,
# extra, test-config; unstack and clean.

# Save trace setting
_XTRACE_BAREMETAL_ORCH_PLUGIN=$(set +o | grep xtrace)
set -o xtrace

source "$(dirname "${BASH_SOURCE[0]}")/lib/baremetal-orch"

if is_service_enabled baremetal-orch-api baremetal-orch-conductor; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing baremetal-orch"
        install_baremetal_orch
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring baremetal-orch"
        configure_baremetal_orch
        if is_service_enabled key; then
            create_baremetal_orch_accounts
        fi
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initializing and starting baremetal-orch"
        init_baremetal_orch
        start_baremetal_orch
    elif [[ "$1" == "stack" && "$2" == "test-config" ]]; then
        if is_service_enabled tempest; then
            echo_summary "Configuring tempest for baremetal-orch"
            configure_baremetal_orch_tempest
        fi
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_baremetal_orch
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_baremetal_orch
    fi
fi

# Restore xtrace
$_XTRACE_BAREMETAL_ORCH_PLUGIN
